import { BlockList, isIPv4, isIPv6 } from "node:net";

/**
 * Which IP addresses a server-side request may not reach, and why. Addresses are parsed,
 * not matched as strings: every IPv6 form that carries an IPv4 address (mapped,
 * translated, compatible, NAT64, 6to4) is judged by the IPv4 address inside it, so
 * `::ffff:7f00:1` is loopback exactly like `127.0.0.1`.
 */

type Range = { list: BlockList; reason: string };

function ranges(family: "ipv4" | "ipv6", table: [string, number, string][]): Range[] {
  return table.map(([network, prefix, reason]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return { list, reason };
  });
}

// First match wins: the metadata address before the link-local range it sits in.
const V4 = ranges("ipv4", [
  ["0.0.0.0", 8, "'this network' (0.0.0.0/8), which reaches this host"],
  ["10.0.0.0", 8, "private (10.0.0.0/8)"],
  ["100.64.0.0", 10, "shared carrier-grade NAT space (100.64.0.0/10)"],
  ["127.0.0.0", 8, "loopback (127.0.0.0/8)"],
  ["169.254.169.254", 32, "the cloud metadata service (169.254.169.254)"],
  ["169.254.0.0", 16, "link-local (169.254.0.0/16)"],
  ["172.16.0.0", 12, "private (172.16.0.0/12)"],
  ["192.0.0.0", 24, "reserved for IETF protocol assignments (192.0.0.0/24)"],
  ["192.0.2.0", 24, "reserved for documentation (192.0.2.0/24)"],
  ["192.88.99.0", 24, "the deprecated 6to4 relay anycast range (192.88.99.0/24)"],
  ["192.168.0.0", 16, "private (192.168.0.0/16)"],
  ["198.18.0.0", 15, "reserved for benchmarking (198.18.0.0/15)"],
  ["198.51.100.0", 24, "reserved for documentation (198.51.100.0/24)"],
  ["203.0.113.0", 24, "reserved for documentation (203.0.113.0/24)"],
  ["224.0.0.0", 4, "multicast (224.0.0.0/4)"],
  ["255.255.255.255", 32, "broadcast (255.255.255.255)"],
  ["240.0.0.0", 4, "reserved (240.0.0.0/4)"],
]);

/** IPv6 ranges that carry an IPv4 address in their last 32 bits (6to4 is handled apart). */
const V6_EMBEDDING = ranges("ipv6", [
  ["::ffff:0:0", 96, "an IPv4-mapped"],
  ["::ffff:0:0:0", 96, "an IPv4-translated"],
  ["64:ff9b::", 96, "a NAT64"],
]);

const V6 = ranges("ipv6", [
  ["::", 128, "unspecified (::)"],
  ["::1", 128, "loopback (::1)"],
  ["::", 96, "IPv4-compatible (::/96, deprecated)"],
  ["64:ff9b:1::", 48, "local-use NAT64 (64:ff9b:1::/48)"],
  ["100::", 64, "discard-only (100::/64)"],
  ["2001::", 32, "a Teredo tunnel address (2001::/32)"],
  ["2001:2::", 48, "reserved for benchmarking (2001:2::/48)"],
  ["2001:db8::", 32, "reserved for documentation (2001:db8::/32)"],
  ["3fff::", 20, "reserved for documentation (3fff::/20)"],
  ["fc00::", 7, "unique-local (fc00::/7)"],
  ["fe80::", 10, "link-local (fe80::/10)"],
  ["fec0::", 10, "site-local (fec0::/10, deprecated)"],
  ["ff00::", 8, "multicast (ff00::/8)"],
]);

const GLOBAL_UNICAST = ranges("ipv6", [["2000::", 3, ""]])[0].list;
const SIX_TO_FOUR = ranges("ipv6", [["2002::", 16, ""]])[0].list;

/**
 * Why `address` may not be connected to, or undefined when it is a public address.
 * Accepts any IP literal: bracketed IPv6, a zone id, and the legacy IPv4 spellings
 * browsers and `inet_aton` accept (`2130706433`, `0x7f000001`, `127.1`). Anything that
 * is not an IP address is refused too.
 */
export function blockedReason(address: string): string | undefined {
  const ip = canonicalIp(address);
  if (!ip) return "not an IP address";
  return ip.family === 4 ? v4Reason(ip.address) : v6Reason(ip.address);
}

/** The canonical text of an IP literal in any accepted spelling, or undefined for a name. */
export function canonicalIp(literal: string): { address: string; family: 4 | 6 } | undefined {
  const text = literal
    .trim()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/%.*$/, "");
  if (isIPv4(text)) return { address: text, family: 4 };
  if (isIPv6(text)) return { address: new URL(`http://[${text}]/`).hostname.slice(1, -1), family: 6 };
  // Decimal, hex, octal and shortened IPv4 (2130706433, 0x7f.1, 0177.0.0.1): the URL
  // parser applies the same rules the system resolver does.
  if (/^[0-9a-fx.]+$/i.test(text)) {
    try {
      const host = new URL(`http://${text}/`).hostname;
      if (isIPv4(host)) return { address: host, family: 4 };
    } catch {
      // not a number either
    }
  }
  return undefined;
}

function v4Reason(address: string): string | undefined {
  return V4.find((r) => r.list.check(address, "ipv4"))?.reason;
}

function v6Reason(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  const embedding = V6_EMBEDDING.find((r) => r.list.check(address, "ipv6"));
  if (embedding) return embeddedReason(embedding.reason, bytes.subarray(12, 16));
  if (SIX_TO_FOUR.check(address, "ipv6")) return embeddedReason("a 6to4", bytes.subarray(2, 6));
  const special = V6.find((r) => r.list.check(address, "ipv6"));
  if (special) {
    // ::a.b.c.d names an IPv4 address too: say which, when that one is private.
    const inner = special.reason.startsWith("IPv4-compatible") ? embeddedReason("an IPv4-compatible", bytes.subarray(12, 16)) : undefined;
    return inner ?? special.reason;
  }
  if (!GLOBAL_UNICAST.check(address, "ipv6")) return "reserved (outside the global unicast range 2000::/3)";
  return undefined;
}

function embeddedReason(kind: string, v4: Uint8Array): string | undefined {
  const inner = v4.join(".");
  const reason = v4Reason(inner);
  return reason ? `${kind} address of ${inner}, which is ${reason}` : undefined;
}

/** The 16 bytes of a valid IPv6 address (canonical text, no zone). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const groups = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const before = groups(head);
  const after = groups(tail);
  const all = tail === undefined ? before : [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}
