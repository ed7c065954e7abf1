import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { DEFAULT_PORTS, readGitUrl, type GitUrl } from "../src/net/git-url.ts";
import { resolveCommit } from "../src/pipeline/source/git.ts";
import { seededRandom } from "./support/fuzz.ts";
import { authorizationOf, startCanary, type Canary, type CanaryHit } from "./support/loopback-canary.ts";
import { differentialUrls, rawGit } from "./support/url-differential.ts";

/**
 * Issue #31, items 1 and 3: the host the address guard checks must be the host git
 * connects to. Generated repository URLs (every scheme git accepts, the scp-like form,
 * and the spellings that split URL readers) go to the pipeline's fetch, with loopback
 * listeners as the ground truth: `127.0.0.2` is the host the operator allowed (two
 * ports: the integration's origin and another), `127.0.0.1` and `[::1]` internal
 * services. Each URL is also given to git unguarded, to learn git's own reading, so
 * the suite shows that it does generate URLs the WHATWG parser and git read differently.
 *
 * Properties, for every URL:
 * - refused by the guard → no connection anywhere;
 * - accepted → git connected only to the host and port the guard checked, which are
 *   also the WHATWG parser's and git's own reading of the URL;
 * - the integration's token went only to its own origin (scheme, host and port).
 */
const SEED = 31;
const COUNT = Number(process.env.SLIPWAY_URL_FUZZ_COUNT ?? 160);
const TOKEN = "fuzz-token-7f3a9c";
const POLICY = { allowHosts: ["127.0.0.2"], allowSetting: "--allow-private-git-hosts" };
const log = { info: () => undefined, tail: () => [] as string[] };

describe("URL differentials between the address guard and git", () => {
  const hits: CanaryHit[] = [];
  let canaries: Canary[] = [];
  let integrationOrigin: Canary;

  beforeAll(async () => {
    const internal4 = await startCanary("127.0.0.1", 0, hits);
    // The same port on ::1 when it is free, so that a URL naming it by either family is caught.
    const internal6 = await startCanary("::1", internal4.port, hits).catch(() => startCanary("::1", 0, hits));
    integrationOrigin = await startCanary("127.0.0.2", 0, hits);
    const another = await startCanary("127.0.0.2", 0, hits);
    canaries = [internal4, internal6, integrationOrigin, another];
  });
  afterAll(async () => {
    await Promise.all(canaries.map((c) => c.close()));
  });

  /** The listeners `run` reached, in the order they were reached. */
  async function reached(run: () => Promise<unknown>): Promise<CanaryHit[]> {
    hits.length = 0;
    await run().catch(() => undefined);
    // A listener records a connection when the client's first bytes arrive or it hangs up.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return [...hits];
  }

  it("connects only where it checked, for generated URLs of every scheme", { timeout: 600_000 }, async () => {
    const [internal4, internal6, allowedA, allowedB] = canaries.map((c) => c.hostPort);
    const urls = differentialUrls(seededRandom(SEED), { allowedA, allowedB, internal4, internal6 }, COUNT);
    const findings: string[] = [];
    let accepted = 0;
    let differential = 0;
    let connected = 0;
    for (const [i, url] of urls.entries()) {
      const reading = readGitUrl(url);
      const gitsOwn = /ProxyCommand/.test(url) ? [] : await reached(() => rawGit(url));
      const checked = reading.url ? await listenersOf(reading.url) : [];
      const whatwg = whatwgHostPort(url);
      if (gitsOwn.length && whatwg && !url.includes("localhost") && gitsOwn.some((hit) => hit.listener !== whatwg)) differential++;

      const integration = i % 2 === 0 ? { baseUrl: `http://${allowedA}/`, token: TOKEN } : undefined;
      const guarded = await reached(() => resolveCommit({ url, ref: "main", integration }, { log, signal: AbortSignal.timeout(30_000), gitHosts: POLICY }));
      connected += guarded.length;
      const label = JSON.stringify(url);
      if (!reading.url) {
        if (guarded.length) findings.push(`${label} was refused (${reading.problem}) but git reached ${guarded.map((h) => h.listener)}`);
        continue;
      }
      accepted++;
      for (const hit of guarded) {
        if (!checked.includes(hit.listener)) findings.push(`${label}: the guard checked ${checked}, git reached ${hit.listener}`);
        const auth = authorizationOf(hit.head);
        if (auth && !(hit.listener === allowedA && reading.url.scheme === "http")) findings.push(`${label}: the token went to ${hit.listener}`);
        if (auth && !auth.includes(Buffer.from(`x-access-token:${TOKEN}`).toString("base64"))) findings.push(`${label}: an unexpected Authorization ${auth}`);
      }
      for (const hit of gitsOwn)
        if (!checked.includes(hit.listener)) findings.push(`${label}: accepted as ${checked}, but git's own reading is ${hit.listener}`);
      if (whatwg && !checked.includes(whatwg) && reading.url.host !== "localhost")
        findings.push(`${label}: accepted as ${checked}, but the WHATWG parser reads ${whatwg}`);
    }
    console.info(`url-differential: ${urls.length} URLs, ${accepted} accepted, ${differential} read differently by git and WHATWG, ${connected} connections`);
    expect(findings).toEqual([]);
    // Not vacuous: the generator made URLs git and the WHATWG parser read differently,
    // the guard accepted some URLs, and git did connect for some of them.
    expect(differential).toBeGreaterThan(3);
    expect(accepted).toBeGreaterThan(10);
    expect(connected).toBeGreaterThan(5);
  });

  it("refuses the spellings of the issue's reproduction, for every scheme, and reaches nothing", async () => {
    const [internal4, internal6, allowedA] = canaries.map((c) => c.hostPort);
    const urls = ["http", "https", "git", "ssh"].flatMap((scheme) => [
      `${scheme}://${allowedA}\\@${internal4}/x.git`,
      `${scheme}://${allowedA}\\\\@${internal4}/x.git`,
      `${scheme}://${allowedA}\\@${internal6}/x.git`,
    ]);
    for (const url of urls) {
      expect(readGitUrl(url).problem, url).toMatch(/'\\'/);
      const guarded = await reached(() =>
        resolveCommit(
          { url, ref: "main", integration: { baseUrl: `http://${allowedA}/`, token: TOKEN } },
          { log, signal: AbortSignal.timeout(30_000), gitHosts: POLICY },
        ),
      );
      expect(guarded, url).toEqual([]);
    }
  });

  it("sends the token to the integration's origin only, not to another port of its host", async () => {
    const [, , allowedA, allowedB] = canaries.map((c) => c.hostPort);
    const fetchFrom = (url: string) =>
      reached(() =>
        resolveCommit(
          { url, ref: "main", integration: { baseUrl: `http://${allowedA}/`, token: TOKEN } },
          { log, signal: AbortSignal.timeout(30_000), gitHosts: POLICY },
        ),
      );
    const own = await fetchFrom(`http://${allowedA}/x.git`);
    expect(own.map((h) => h.listener)).toEqual([allowedA]);
    expect(authorizationOf(own[0].head)).toBe(`Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString("base64")}`);
    const other = await fetchFrom(`http://${allowedB}/x.git`);
    expect(other.map((h) => h.listener)).toEqual([allowedB]);
    expect(authorizationOf(other[0].head)).toBeUndefined();
    // Same host and port, another scheme: a TLS hello, and no token in it.
    const tls = await fetchFrom(`https://${allowedA}/x.git`);
    expect(tls.map((h) => h.listener)).toEqual([allowedA]);
    expect(tls[0].head).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString("base64"));
  });
});

/** The listeners a reading names: its address and port, or each address its name resolves to. */
async function listenersOf(url: GitUrl): Promise<string[]> {
  const port = url.port ?? DEFAULT_PORTS[url.scheme];
  const addresses = isIP(url.host) ? [url.host] : (await lookup(url.host, { all: true }).catch(() => [])).map((a) => a.address);
  return addresses.map((address) => (address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`));
}

/** Where the WHATWG parser says `url` goes (`host:port`), or undefined when it is no URL to it. */
function whatwgHostPort(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    const scheme = parsed.protocol.slice(0, -1) as keyof typeof DEFAULT_PORTS;
    if (!(scheme in DEFAULT_PORTS) || !parsed.hostname) return undefined;
    return `${parsed.hostname}:${parsed.port || DEFAULT_PORTS[scheme]}`;
  } catch {
    return undefined;
  }
}
