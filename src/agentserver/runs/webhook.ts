import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { invalidField } from "../../http/errors.ts";

/**
 * Where run webhooks may go. By default only public http(s) addresses: loopback,
 * private, link-local and metadata ranges are refused so a run cannot be used to
 * reach internal services. `allowHosts` names hosts (or IPs) that are let through
 * anyway, e.g. an internal receiver or 127.0.0.1 in tests.
 */
export interface WebhookPolicy {
  allowHosts: string[];
  /** When set, only these hosts are accepted at all. */
  onlyAllowed: boolean;
}

export function checkWebhookUrl(raw: string, policy: WebhookPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidField(["body", "webhook"], "must be an absolute http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalidField(["body", "webhook"], "must use http or https");
  if (url.username || url.password) throw invalidField(["body", "webhook"], "must not carry credentials");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (policy.allowHosts.includes(host)) return url;
  if (policy.onlyAllowed) throw invalidField(["body", "webhook"], `host ${host} is not in the webhook allow-list`);
  if (isIP(host) && isBlockedAddress(host)) throw invalidField(["body", "webhook"], `address ${host} is not allowed for webhooks`);
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".internal")) {
    throw invalidField(["body", "webhook"], `host ${host} is not allowed for webhooks`);
  }
  return url;
}

/** Sends the run record; re-checks the resolved address (DNS may point inside). */
export async function sendWebhook(url: string, body: unknown, policy: WebhookPolicy): Promise<void> {
  const target = checkWebhookUrl(url, policy);
  const host = target.hostname.replace(/^\[|\]$/g, "");
  if (!policy.allowHosts.includes(host) && !isIP(host)) {
    const addresses = await lookup(host, { all: true });
    if (addresses.some((a) => isBlockedAddress(a.address))) throw new Error(`webhook host ${host} resolves to a blocked address`);
  }
  const response = await fetch(target, {
    method: "POST",
    headers: { "content-type": "application/json", "user-agent": "slipway-webhook" },
    body: JSON.stringify(body),
    redirect: "manual",
    signal: AbortSignal.timeout(10_000),
  });
  await response.body?.cancel();
  if (response.status >= 400) throw new Error(`webhook answered ${response.status}`);
}

export function isBlockedAddress(address: string): boolean {
  if (address.includes(":")) {
    const a = address.toLowerCase();
    if (a === "::1" || a === "::") return true;
    if (a.startsWith("fe80") || a.startsWith("fc") || a.startsWith("fd")) return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
    return mapped ? isBlockedAddress(mapped[1]) : false;
  }
  const [a, b] = address.split(".").map(Number);
  return (
    a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224
  );
}
