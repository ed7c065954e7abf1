import { createServer, request, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AddressRefused, blockedReason, guardedFetch, guardedLookup, resolveGuarded, type AddressGuardPolicy, type ResolvedAddress } from "./address-guard.ts";

const NONE: AddressGuardPolicy = { allowHosts: [], allowSetting: "--allow-test-hosts" };

describe("blockedReason", () => {
  it("refuses every private, loopback, link-local and metadata spelling the issue lists", () => {
    const cases: [string, RegExp][] = [
      ["127.0.0.1", /loopback/],
      ["127.0.0.2", /loopback/],
      ["[::1]", /loopback/],
      ["::1", /loopback/],
      ["2130706433", /loopback/],
      ["0x7f000001", /loopback/],
      ["0177.0.0.1", /loopback/],
      ["127.1", /loopback/],
      ["0.0.0.0", /this network/],
      ["::", /unspecified/],
      ["169.254.169.254", /metadata/],
      ["169.254.1.1", /link-local/],
      // IPv4 inside IPv6: judged by the IPv4 address.
      ["::ffff:127.0.0.1", /IPv4-mapped address of 127\.0\.0\.1, which is loopback/],
      ["[::ffff:127.0.0.1]", /IPv4-mapped.*loopback/],
      ["::ffff:7f00:1", /IPv4-mapped.*loopback/],
      ["0:0:0:0:0:ffff:127.0.0.1", /IPv4-mapped.*loopback/],
      ["::ffff:169.254.169.254", /IPv4-mapped.*metadata/],
      ["::ffff:0:a00:1", /IPv4-translated.*private/],
      ["::7f00:1", /IPv4-compatible.*loopback/],
      ["::127.0.0.1", /IPv4-compatible.*loopback/],
      ["::8.8.8.8", /IPv4-compatible/],
      ["64:ff9b::7f00:1", /NAT64 address of 127\.0\.0\.1/],
      ["64:ff9b::a9fe:a9fe", /NAT64.*metadata/],
      ["64:ff9b:1::1", /local-use NAT64/],
      ["2002:7f00:1::1", /6to4 address of 127\.0\.0\.1/],
      ["2002:c0a8:101::1", /6to4 address of 192\.168\.1\.1/],
      ["fec0::1", /site-local/],
      ["fc00::1", /unique-local/],
      ["fd12:3456::1", /unique-local/],
      ["fe80::1", /link-local/],
      ["fe80::1%eth0", /link-local/],
      ["ff02::1", /multicast/],
      ["2001:db8::1", /documentation/],
      ["2001::1", /Teredo/],
      ["100::1", /discard/],
      ["4000::1", /reserved/],
      ["10.1.2.3", /private/],
      ["172.16.0.1", /private/],
      ["172.31.255.255", /private/],
      ["192.168.0.1", /private/],
      ["100.64.0.1", /carrier-grade NAT/],
      ["100.100.100.200", /carrier-grade NAT/],
      ["192.0.0.8", /IETF/],
      ["192.0.2.1", /documentation/],
      ["198.51.100.1", /documentation/],
      ["203.0.113.1", /documentation/],
      ["198.18.0.1", /benchmarking/],
      ["198.19.255.255", /benchmarking/],
      ["224.0.0.1", /multicast/],
      ["239.255.255.250", /multicast/],
      ["240.0.0.1", /reserved/],
      ["255.255.255.255", /broadcast/],
      ["localhost", /not an IP address/],
      ["", /not an IP address/],
    ];
    for (const [address, reason] of cases) expect(blockedReason(address), address).toMatch(reason);
  });

  it("lets public addresses through, in IPv6 embeddings too", () => {
    for (const address of [
      "8.8.8.8",
      "1.1.1.1",
      "140.82.112.3",
      "172.32.0.1",
      "198.20.0.1",
      "100.128.0.1",
      "2606:4700:4700::1111",
      "2a00:1450::1",
      "64:ff9b::808:808",
      "2002:808:808::1",
    ]) {
      expect(blockedReason(address), address).toBeUndefined();
    }
  });
});

describe("resolveGuarded", () => {
  it("refuses literals in any spelling, saying which address, why, and how to allow it", async () => {
    for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]", "2130706433", "0x7f000001", "169.254.169.254"]) {
      const error = await resolveGuarded(host, NONE).catch((e: unknown) => e);
      expect(error, host).toBeInstanceOf(AddressRefused);
      expect((error as Error).message, host).toMatch(/is refused: it is .*(loopback|metadata).*add .* to --allow-test-hosts/);
    }
  });

  it("checks names after resolution (localhost resolves to loopback)", async () => {
    const error = await resolveGuarded("localhost", NONE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AddressRefused);
    expect((error as Error).message).toMatch(/^host localhost \(address (127\.0\.0\.1|::1)\) is refused: it is loopback/);
  });

  it("lets an allow-listed name or address through", async () => {
    expect((await resolveGuarded("localhost", { allowHosts: ["LOCALHOST"] })).length).toBeGreaterThan(0);
    expect(await resolveGuarded("[::1]", { allowHosts: ["::1"] })).toEqual([{ address: "::1", family: 6 }]);
    expect(await resolveGuarded("2130706433", { allowHosts: ["127.0.0.1"] })).toEqual([{ address: "127.0.0.1", family: 4 }]);
    // Allowing 127.0.0.1 does not allow the rest of 127/8.
    await expect(resolveGuarded("127.0.0.2", { allowHosts: ["127.0.0.1"] })).rejects.toBeInstanceOf(AddressRefused);
  });

  it("refuses a name when any of its addresses is blocked", async () => {
    const resolve = async (): Promise<ResolvedAddress[]> => [
      { address: "8.8.8.8", family: 4 },
      { address: "10.0.0.1", family: 4 },
    ];
    await expect(resolveGuarded("mixed.example", { allowHosts: [], resolve })).rejects.toThrow(/host mixed\.example \(address 10\.0\.0\.1\) is refused/);
    expect(await resolveGuarded("mixed.example", { allowHosts: ["mixed.example"], resolve })).toHaveLength(2);
  });

  it("fails a name that does not resolve with an ordinary error", async () => {
    const error = await resolveGuarded("nothing-here.invalid", NONE).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(AddressRefused);
    expect((error as NodeJS.ErrnoException).code).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });
});

describe("guardedFetch and guardedLookup against a real server", () => {
  let server: Server;
  let port = 0;
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.host}`);
      if (req.url === "/redirect") res.writeHead(302, { location: "/target" }).end();
      else if (req.url === "/slow") setTimeout(() => res.end("late"), 2_000);
      else if (req.url === "/big") res.end("x".repeat(4096));
      else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("sends nothing to a blocked address, in any spelling", async () => {
    const before = seen.length;
    for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "2130706433", "0x7f000001", "localhost"]) {
      await expect(guardedFetch(`http://${host}:${port}/`, {}, NONE), host).rejects.toBeInstanceOf(AddressRefused);
    }
    expect(seen.length).toBe(before);
  });

  it("reaches an allow-listed host and reads the answer", async () => {
    const response = await guardedFetch(
      `http://127.0.0.1:${port}/hello?x=1`,
      { method: "POST", body: "{}", headers: { "content-type": "application/json" } },
      { allowHosts: ["127.0.0.1"] },
    );
    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(response.headers.get("Content-Type")).toBe("application/json");
    expect(await response.json()).toEqual({ ok: true });
    expect(seen.at(-1)).toBe(`POST /hello?x=1 127.0.0.1:${port}`);
  });

  it("never follows a redirect", async () => {
    const before = seen.length;
    const response = await guardedFetch(`http://127.0.0.1:${port}/redirect`, {}, { allowHosts: ["127.0.0.1"] });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/target");
    expect(seen.slice(before)).toEqual([`GET /redirect 127.0.0.1:${port}`]);
  });

  it("connects to the address it checked: a DNS answer that changes afterwards is not asked for", async () => {
    // The first answer is the allowed loopback address; every later one points elsewhere
    // (a rebinding attack's second answer). One resolution, and the request arrives.
    const answers: string[] = [];
    const resolve = async (): Promise<ResolvedAddress[]> => {
      const address = answers.length === 0 ? "127.0.0.1" : "10.255.255.1";
      answers.push(address);
      return [{ address, family: 4 }];
    };
    const response = await guardedFetch(`http://rebind.example:${port}/pinned`, { timeoutMs: 3_000 }, { allowHosts: ["127.0.0.1"], resolve });
    expect(response.status).toBe(200);
    expect(answers).toEqual(["127.0.0.1"]);
    expect(seen.at(-1)).toBe(`GET /pinned rebind.example:${port}`);
  });

  it("gives up after its timeout, and on an oversized body", async () => {
    const started = Date.now();
    const error = await guardedFetch(`http://127.0.0.1:${port}/slow`, { timeoutMs: 300 }, { allowHosts: ["127.0.0.1"] }).catch((e: Error) => e);
    expect((error as Error).name).toBe("TimeoutError");
    expect(Date.now() - started).toBeLessThan(1_500);
    await expect(guardedFetch(`http://127.0.0.1:${port}/big`, { maxBytes: 1024 }, { allowHosts: ["127.0.0.1"] })).rejects.toThrow(/larger than 1024 bytes/);
  });

  it("guardedLookup makes node:http refuse a name that resolves to a blocked address", async () => {
    const get = (policy: AddressGuardPolicy) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: "localhost", port, path: "/lookup", lookup: guardedLookup(policy), agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject).end();
      });
    const before = seen.length;
    await expect(get(NONE)).rejects.toBeInstanceOf(AddressRefused);
    expect(seen.length).toBe(before);
    expect(await get({ allowHosts: ["localhost"] })).toBe(200);
  });
});
