import { describe, expect, it } from "vitest";
import { canonicalIp, clientIp, ipIdentity, parseTrustedProxies } from "./client-ip.ts";

describe("client IP", () => {
  const trusted = parseTrustedProxies(["10.0.0.0/8", "fd00::/8,127.0.0.1"]);

  it("uses the socket peer when it is not a trusted proxy, whatever X-Forwarded-For says", () => {
    expect(clientIp("203.0.113.9", "1.2.3.4", trusted)).toBe("203.0.113.9");
    expect(clientIp("203.0.113.9", "1.2.3.4", parseTrustedProxies([]))).toBe("203.0.113.9");
  });

  it("walks X-Forwarded-For from the right through trusted hops only", () => {
    expect(clientIp("10.0.0.1", "198.51.100.5", trusted)).toBe("198.51.100.5");
    // The client forged "1.2.3.4"; the proxy appended the real peer 198.51.100.5.
    expect(clientIp("10.0.0.1", "1.2.3.4, 198.51.100.5", trusted)).toBe("198.51.100.5");
    expect(clientIp("10.0.0.1", ["198.51.100.5", "10.0.0.2"], trusted)).toBe("198.51.100.5");
    expect(clientIp("127.0.0.1", "10.9.9.9, 10.0.0.2", trusted)).toBe("10.9.9.9");
    expect(clientIp("fd00::1", "garbage, 2001:db8::1", trusted)).toBe("2001:db8::1");
    expect(clientIp("10.0.0.1", "garbage, 10.0.0.3", trusted)).toBe("10.0.0.3");
  });

  it("treats IPv4-mapped IPv6 peers as IPv4", () => {
    expect(clientIp("::ffff:10.0.0.1", "198.51.100.5", trusted)).toBe("198.51.100.5");
    expect(clientIp("::ffff:203.0.113.9", undefined, trusted)).toBe("203.0.113.9");
  });

  it("knows the names loopback, private and linklocal", () => {
    const named = parseTrustedProxies(["loopback", "private"]);
    expect(named.has("127.0.0.5")).toBe(true);
    expect(named.has("::1")).toBe(true);
    expect(named.has("172.20.1.1")).toBe(true);
    expect(named.has("8.8.8.8")).toBe(false);
  });

  it.each(["10.0.0.0/33", "not-an-ip", "10.0.0.0/8/1", "::/129", "10.0.0.0/x"])("refuses %j naming it", (entry) => {
    expect(() => parseTrustedProxies([entry])).toThrow(`--trusted-proxy "${entry}"`);
  });

  it("keys IPv6 by /64 and IPv4 whole", () => {
    expect(ipIdentity("2001:db8:0:1:aaaa::1")).toBe("2001:db8:0:1::/64");
    expect(ipIdentity("2001:0DB8::1")).toBe("2001:db8:0:0::/64");
    expect(ipIdentity("::1")).toBe("0:0:0:0::/64");
    expect(ipIdentity("64:ff9b::192.0.2.1")).toBe("64:ff9b:0:0::/64");
    expect(ipIdentity("192.0.2.1")).toBe("192.0.2.1");
  });

  it.each([
    ["203.0.113.7", "203.0.113.7"],
    [" 203.000.113.007 ", "203.0.113.7"],
    ["203.0.113.7:51234", "203.0.113.7"],
    ["::FFFF:203.0.113.7", "203.0.113.7"],
    ["::ffff:cb00:7107", "203.0.113.7"],
    ["0:0:0:0:0:ffff:203.0.113.7", "203.0.113.7"],
    ["0000:0000:0000:0000:0000:FFFF:CB00:7107", "203.0.113.7"],
    ["[::ffff:203.0.113.7]:443", "203.0.113.7"],
    ["2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["[2001:db8::1]:8080", "2001:db8::1"],
    ["fe80::1%eth0", "fe80::1"],
    ["::1", "::1"],
    ["64:ff9b::192.0.2.1", "64:ff9b::c000:201"],
  ])("spells %j as %j", (text, canonical) => {
    expect(canonicalIp(text)).toBe(canonical);
  });

  it.each(["", "garbage", "256.1.1.1", "1.2.3", "1.2.3.4.5", "[1.2.3.4", "2001:db8::1::2", "unknown"])("finds no address in %j", (text) => {
    expect(canonicalIp(text)).toBeUndefined();
  });

  it("counts every spelling of a forwarded client as that client, and trusts proxies in any spelling", () => {
    const loopback = parseTrustedProxies(["loopback"]);
    expect(clientIp("::ffff:127.0.0.1", "::FFFF:198.51.100.5", loopback)).toBe("198.51.100.5");
    expect(clientIp("127.0.0.1", "198.51.100.5, 0:0:0:0:0:FFFF:7F00:0001", loopback)).toBe("198.51.100.5");
    expect(clientIp("127.0.0.1", "[2001:DB8::5]:443", loopback)).toBe("2001:db8::5");
  });
});
