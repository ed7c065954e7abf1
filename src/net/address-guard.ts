import { lookup as systemLookup } from "node:dns/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { blockedReason, canonicalIp } from "./ip-ranges.ts";

export { blockedReason, canonicalIp } from "./ip-ranges.ts";

/**
 * The address guard: every request a Slipway server makes to a URL someone else chose
 * (run webhooks, git host listings, the pipeline's git fetches) goes through it.
 *
 * - Loopback, private, link-local, metadata and other special addresses are refused
 *   (see ip-ranges.ts), in every spelling, unless the operator allows the host by name
 *   or address (`allowHosts`).
 * - The check is made after name resolution, on every address the name resolves to,
 *   at every request.
 * - The connection goes to an address that was checked: `guardedFetch` resolves once
 *   and pins the connection to that answer, so a DNS answer that changes between the
 *   check and the connection (DNS rebinding) changes nothing.
 * - Redirects are never followed.
 */
export interface AddressGuardPolicy {
  /** Host names or IP literals let through although they are private or loopback. */
  allowHosts: readonly string[];
  /** The setting an operator fills `allowHosts` with, named in refusals (e.g. "--webhook-allow"). */
  allowSetting?: string;
  /** Name resolution; the system's by default (so /etc/hosts counts). Tests replay DNS rebinding with it. */
  resolve?: (host: string) => Promise<ResolvedAddress[]>;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** A destination the guard will not connect to. The message says what, why, and how to allow it. */
export class AddressRefused extends Error {
  readonly host: string;
  readonly address: string;
  readonly reason: string;

  constructor(host: string, address: string, reason: string, allowSetting = "the allow-list") {
    // Error messages quote at most 200 characters of what a caller sent.
    const shown = host.length > 200 ? `${host.slice(0, 200)}...` : host;
    const what = canonicalIp(host)?.address === address ? `address ${address}` : `host ${shown} (address ${address})`;
    super(`${what} is refused: it is ${reason}. If this host is meant to be reached, add ${shown} to ${allowSetting}`);
    this.name = "AddressRefused";
    this.host = host;
    this.address = address;
    this.reason = reason;
  }
}

/** A host as compared with the allow-list: lower case, no brackets, no trailing dot; IPs canonical. */
function hostKey(host: string): string {
  const plain = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
  return canonicalIp(plain)?.address ?? plain;
}

/** Whether the operator let `host` (a name or an IP literal) through by name. */
export function isAllowedHost(host: string, policy: AddressGuardPolicy): boolean {
  const key = hostKey(host);
  return policy.allowHosts.some((entry) => hostKey(entry) === key);
}

/**
 * Resolves `host` (a name or an IP literal in any spelling) and returns the addresses to
 * connect to; throws AddressRefused if any of them is blocked and neither the host nor that
 * address is allow-listed. A name that does not resolve is an ordinary error (ENOTFOUND).
 */
export async function resolveGuarded(host: string, policy: AddressGuardPolicy): Promise<ResolvedAddress[]> {
  const name = hostKey(host);
  const literal = canonicalIp(name);
  const addresses = literal ? [literal] : await (policy.resolve ?? resolveSystem)(name);
  if (addresses.length === 0) throw Object.assign(new Error(`${name} did not resolve to any address`), { code: "ENOTFOUND" });
  if (isAllowedHost(name, policy)) return addresses;
  for (const { address } of addresses) {
    const reason = blockedReason(address);
    if (reason && !isAllowedHost(address, policy)) throw new AddressRefused(name, hostKey(address), reason, policy.allowSetting);
  }
  return addresses;
}

async function resolveSystem(name: string): Promise<ResolvedAddress[]> {
  const answers = await systemLookup(name, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/**
 * A `dns.lookup`-compatible function that only yields checked addresses, for
 * `http.request({ lookup })`, `net.connect({ lookup })` or an undici Agent's `connect`.
 * Node does not call `lookup` for an IP literal: check those with `resolveGuarded` first
 * (`guardedFetch` does both).
 */
export function guardedLookup(policy: AddressGuardPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveGuarded(hostname, policy).then(
      (addresses) => answerLookup(hostname, addresses, options, callback),
      (error: Error) => callback(error, "", 0),
    );
  };
}

/** A lookup that answers `addresses` (already checked) whatever it is asked. */
function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (hostname, options, callback) => answerLookup(hostname, addresses, options, callback);
}

function answerLookup(
  hostname: string,
  addresses: readonly ResolvedAddress[],
  options: { family?: number | string; all?: boolean },
  callback: Parameters<LookupFunction>[2],
): void {
  const family = options.family === 4 || options.family === "IPv4" ? 4 : options.family === 6 || options.family === "IPv6" ? 6 : 0;
  const usable = family ? addresses.filter((a) => a.family === family) : [...addresses];
  if (usable.length === 0) {
    callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: "ENOTFOUND" }), "", 0);
  } else if (options.all) {
    callback(null, usable);
  } else {
    callback(null, usable[0].address, usable[0].family);
  }
}

interface GuardedFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The whole exchange, resolution to last byte (default 10 s). */
  timeoutMs?: number;
  /** The largest response body read (default 8 MiB). */
  maxBytes?: number;
}

/** What `guardedFetch` answers: the status, headers and the body, already read. */
export interface GuardedResponse {
  status: number;
  ok: boolean;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  json(): Promise<unknown>;
}

/**
 * An HTTP(S) request from the server through the guard: checked at every call, connected
 * only to the checked addresses, redirects returned as they are (never followed), bounded
 * in time and size. A timeout throws an Error named "TimeoutError"; a refusal AddressRefused.
 */
export async function guardedFetch(url: string | URL, init: GuardedFetchInit, policy: AddressGuardPolicy): Promise<GuardedResponse> {
  const target = new URL(url);
  if (target.protocol !== "http:" && target.protocol !== "https:") throw new Error(`only http and https URLs can be fetched, not ${target.protocol}`);
  const timeoutMs = init.timeoutMs ?? 10_000;
  const maxBytes = init.maxBytes ?? 8 * 1024 * 1024;
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const timeout = () => Object.assign(new Error(`${target.host} did not answer within ${timeoutMs} ms`), { name: "TimeoutError" });

  return new Promise<GuardedResponse>((resolve, reject) => {
    let request: ReturnType<typeof httpRequest> | undefined;
    let done = false;
    const finish = (error: Error | undefined, response?: GuardedResponse) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (error) {
        request?.destroy();
        reject(error);
      } else resolve(response!);
    };
    const timer = setTimeout(() => finish(timeout()), timeoutMs);

    resolveGuarded(host, policy).then(
      (addresses) => {
        if (done) return;
        const send = target.protocol === "https:" ? httpsRequest : httpRequest;
        request = send(
          {
            protocol: target.protocol,
            hostname: host,
            port: target.port || undefined,
            path: `${target.pathname}${target.search}`,
            method: init.method ?? "GET",
            headers: { ...init.headers, ...(init.body !== undefined ? { "content-length": String(Buffer.byteLength(init.body)) } : {}) },
            lookup: pinnedLookup(addresses),
            // A socket of its own: a pooled one may have been opened to another answer.
            agent: false,
          },
          (response) =>
            readBody(response, maxBytes).then(
              (body) => finish(undefined, toResponse(response, body)),
              (error: Error) => finish(error),
            ),
        );
        request.on("error", (error) => finish(error));
        request.end(init.body);
      },
      (error: Error) => finish(error),
    );
  });
}

function readBody(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        response.destroy();
        reject(new Error(`the response is larger than ${maxBytes} bytes`));
      } else chunks.push(chunk);
    });
    response.on("end", () => resolve(Buffer.concat(chunks)));
    response.on("error", reject);
  });
}

function toResponse(response: IncomingMessage, body: Buffer): GuardedResponse {
  const status = response.statusCode ?? 0;
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get(name: string) {
        const value = response.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    },
    text: async () => body.toString("utf8"),
    json: async () => JSON.parse(body.toString("utf8")) as unknown,
  };
}
