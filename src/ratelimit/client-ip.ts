import { BlockList, isIP, isIPv6 } from "node:net";

/** Names usable in `--trusted-proxy` besides addresses and CIDR ranges. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  private: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
};

export interface TrustedProxies {
  has(ip: string): boolean;
}

/**
 * Compiles `--trusted-proxy` values: addresses ("10.0.0.7"), CIDR ranges
 * ("10.0.0.0/8", "fd00::/8") or the names loopback, private, linklocal. Commas may
 * separate several in one value. A bad entry throws, naming it.
 */
export function parseTrustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList();
  let any = false;
  for (const entry of entries
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter(Boolean)) {
    for (const range of NAMED_RANGES[entry.toLowerCase()] ?? [entry]) {
      const [address, bits, extra] = range.split("/");
      const family = isIP(address ?? "");
      const type = family === 6 ? "ipv6" : "ipv4";
      const max = family === 6 ? 128 : 32;
      const prefix = bits === undefined ? max : /^\d+$/.test(bits) ? Number(bits) : NaN;
      if (!family || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
        throw new Error(`--trusted-proxy "${entry}" is not an IP address, a CIDR range or one of ${Object.keys(NAMED_RANGES).join(", ")}`);
      }
      list.addSubnet(address!, prefix, type);
      any = true;
    }
  }
  if (!any) return { has: () => false };
  return {
    has(ip) {
      const family = isIP(ip);
      return family !== 0 && list.check(ip, family === 6 ? "ipv6" : "ipv4");
    },
  };
}

/**
 * The address of the client. `X-Forwarded-For` is believed only as far as the chain
 * of trusted proxies goes: starting from the socket peer, while the current hop is
 * trusted, step to the address it says it received the request from (right to left).
 * A client cannot forge its way past an untrusted hop, because only trusted hops
 * are asked. Every address is canonicalIp's form, so one client is one identity.
 */
export function clientIp(socketAddress: string | undefined, forwardedFor: string | string[] | undefined, trusted: TrustedProxies): string {
  let ip = canonicalIp(socketAddress ?? "") ?? socketAddress ?? "";
  if (!forwardedFor || !trusted.has(ip)) return ip;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor).split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = canonicalIp(hops[i]!);
    if (hop === undefined) break;
    ip = hop;
    if (!trusted.has(ip)) break;
  }
  return ip;
}

const DOTTED = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const BRACKETED = /^\[([^\]]+)\](?::\d{1,5})?$/;
const V4_WITH_PORT = /^([\d.]+):\d{1,5}$/;

/**
 * One spelling per address, or undefined for something that is not one. Proxies and
 * sockets write the same client in many ways; each becomes:
 * - IPv4 in plain dotted decimal. Zero-padded octets (`010.000.000.001`) are read as
 *   decimal, the way fixed-width logs pad them (not as inet_aton's octal);
 * - an IPv4-mapped IPv6 address in any spelling (`::FFFF:1.2.3.4`, `::ffff:102:304`,
 *   `0:0:0:0:0:ffff:1.2.3.4`) as the IPv4 address it carries;
 * - other IPv6 in RFC 5952 form: lower case, zeros compressed, no zone (`%eth0`);
 * with brackets and a port (`[::1]:443`, `1.2.3.4:80`) taken off first.
 */
export function canonicalIp(text: string): string | undefined {
  let address = text.trim();
  const bracketed = BRACKETED.exec(address);
  if (bracketed) address = bracketed[1]!;
  else {
    const withPort = V4_WITH_PORT.exec(address);
    if (withPort) address = withPort[1]!;
  }
  const dotted = DOTTED.exec(address);
  if (dotted) {
    const octets = dotted.slice(1).map(Number);
    return octets.every((octet) => octet <= 255) ? octets.join(".") : undefined;
  }
  address = address.replace(/%.*$/, "");
  if (!isIPv6(address)) return undefined;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
  }
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/**
 * The part of an address a counter is keyed on: an IPv4 address whole, an IPv6
 * address by its /64 network. One IPv6 host usually holds a whole /64 and could
 * otherwise take a fresh address, and a fresh quota, for every request.
 */
export function ipIdentity(ip: string): string {
  if (!isIPv6(ip)) return ip;
  const network = ipv6Groups(ip)
    .slice(0, 4)
    .map((group) => group.toString(16));
  return `${network.join(":")}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (no zone), an embedded IPv4 tail included. */
function ipv6Groups(address: string): number[] {
  let text = address;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split("::") as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(":").map((group) => parseInt(group, 16)) : []);
  const left = parse(head);
  const right = parse(rest);
  return rest === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
