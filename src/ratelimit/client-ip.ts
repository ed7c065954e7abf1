import { BlockList, isIP } from "node:net";

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
  for (const entry of entries.flatMap((value) => value.split(",")).map((value) => value.trim()).filter(Boolean)) {
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
 * are asked.
 */
export function clientIp(socketAddress: string | undefined, forwardedFor: string | string[] | undefined, trusted: TrustedProxies): string {
  let ip = unmapIPv4(socketAddress ?? "");
  if (!forwardedFor || !trusted.has(ip)) return ip;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor).split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = unmapIPv4(hops[i]!.trim());
    if (!isIP(hop)) break;
    ip = hop;
    if (!trusted.has(ip)) break;
  }
  return ip;
}

function unmapIPv4(ip: string): string {
  return ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

/**
 * The part of an address a counter is keyed on: an IPv4 address whole, an IPv6
 * address by its /64 network. One IPv6 host usually holds a whole /64 and could
 * otherwise take a fresh address, and a fresh quota, for every request.
 */
export function ipIdentity(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const groups = expandIPv6(ip);
  return groups ? `${groups.slice(0, 4).join(":")}::/64` : ip;
}

function expandIPv6(ip: string): string[] | undefined {
  const zoneless = ip.split("%")[0]!;
  const [head, tail] = zoneless.split("::") as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(":") : []);
  const left = parse(head);
  const right = parse(tail);
  // An embedded IPv4 tail (::ffff:1.2.3.4 style) only affects the low 64 bits we drop.
  const count = left.length + right.length + (right.at(-1)?.includes(".") || left.at(-1)?.includes(".") ? 1 : 0);
  const missing = tail === undefined ? 0 : 8 - count;
  if (missing < 0) return undefined;
  return [...left, ...Array<string>(missing).fill("0"), ...right].map((group) => (group.includes(".") ? group : group.toLowerCase().replace(/^0+(?=.)/, "")));
}
