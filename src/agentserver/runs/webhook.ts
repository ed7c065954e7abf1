import { invalidField } from "../../http/errors.ts";
import { blockedReason, canonicalIp, guardedFetch, isAllowedHost, type AddressGuardPolicy } from "../../net/address-guard.ts";
import { domainAllowed, type WebhookUrlRules } from "../graphs/webhooks-config.ts";

/**
 * Where run webhooks may go. By default only public http(s) addresses: the address guard
 * (src/net/address-guard.ts) refuses loopback, private, link-local, metadata and other
 * special addresses in every spelling. `allowHosts` names hosts (or IPs) let through
 * anyway, e.g. an internal receiver or 127.0.0.1 in tests (`--webhook-allow`).
 */
export interface WebhookPolicy extends AddressGuardPolicy {
  /** When set, only the allow-listed hosts are accepted at all. */
  onlyAllowed: boolean;
  /** The project's own rules (langgraph.json `webhooks.url`), on top of the address guard's. */
  rules?: WebhookUrlRules;
  /** Sent with every call (langgraph.json `webhooks.headers`, resolved). */
  headers?: Record<string, string>;
}

const ALLOW_SETTING = "--webhook-allow (or SLIPWAY_WEBHOOK_ALLOW_HOSTS)";

/**
 * The check made when a run is created (422 at `body.webhook`): what can be told without
 * resolving names. Names are resolved, and checked again, when the webhook is sent.
 */
export function checkWebhookUrl(raw: string, policy: WebhookPolicy): URL {
  const refuse = (msg: string) => invalidField(["body", "webhook"], msg);
  const rules = policy.rules;
  if (rules?.maxUrlLength !== undefined && raw.length > rules.maxUrlLength) {
    throw refuse(`is ${raw.length} characters long; the project allows ${rules.maxUrlLength} (webhooks.url.max_url_length)`);
  }
  if (raw.startsWith("/") && !raw.startsWith("//")) {
    throw refuse(
      rules?.disableLoopback
        ? "relative URLs are turned off by the project (webhooks.url.disable_loopback)"
        : "relative URLs (calls to this server's own routes) are not supported yet: give an absolute http(s) URL",
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("must be an absolute http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse("must use http or https");
  if (rules?.requireHttps && url.protocol !== "https:") throw refuse("must use https (webhooks.url.require_https)");
  if (url.username || url.password) throw refuse("must not carry credentials");
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (rules?.allowedDomains.length && !domainAllowed(host, rules.allowedDomains)) {
    throw refuse(`host ${host} is not one of the project's webhooks.url.allowed_domains`);
  }
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  if (rules?.allowedPorts.length && !rules.allowedPorts.includes(port)) {
    throw refuse(`port ${port} is not one of the project's webhooks.url.allowed_ports`);
  }
  if (isAllowedHost(host, policy)) return url;
  if (policy.onlyAllowed) throw refuse(`host ${host} is not in the webhook allow-list (${ALLOW_SETTING})`);
  const reason = canonicalIp(host) ? blockedReason(host) : undefined;
  if (reason) throw refuse(`address ${host} is not allowed for webhooks: it is ${reason}; an operator may allow it with ${ALLOW_SETTING}`);
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".internal")) {
    throw refuse(`host ${host} is not allowed for webhooks; an operator may allow it with ${ALLOW_SETTING}`);
  }
  return url;
}

/**
 * Sends the run record. The URL is checked again, its name resolved through the address
 * guard, and the request pinned to the checked address (no second lookup to rebind).
 */
export async function sendWebhook(url: string, body: unknown, policy: WebhookPolicy): Promise<void> {
  const target = checkWebhookUrl(url, policy);
  const response = await guardedFetch(
    target,
    {
      method: "POST",
      headers: { "user-agent": "slipway-webhook", ...policy.headers, "content-type": "application/json" },
      body: JSON.stringify(body),
      timeoutMs: 10_000,
      maxBytes: 1024 * 1024,
    },
    { allowSetting: ALLOW_SETTING, ...policy },
  );
  if (response.status >= 400) throw new Error(`webhook answered ${response.status}`);
}
