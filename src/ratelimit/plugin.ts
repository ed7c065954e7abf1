import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { SlipwayError } from "../http/errors.ts";
import { clientIp, parseTrustedProxies, type TrustedProxies } from "./client-ip.ts";
import { compilePolicy } from "./compile.ts";
import { DEFAULT_RULES } from "./default-policy.ts";
import { RateLimiter, type Decision } from "./evaluate.ts";
import { withExposed } from "../http/expose-headers.ts";
import { EXPOSED_HEADERS, rejectionDetail, rejectionHeaders, setRateLimitHeaders } from "./headers.ts";
import type { Region, RuleSource } from "./rules.ts";
import { StoreUnavailableError, systemClock, type Clock, type RateLimitStore } from "./stores/store.ts";

/** Who is calling, as authentication established it. */
export interface CallerIdentity {
  /** Set only for a key authentication accepted; unknown keys fall to the IP catch-all. */
  apiKey?: string;
  /** Set only for the authenticated principal of a bearer token. */
  userId?: string;
}

export interface RateLimitOptions {
  enabled: boolean;
  region: Region;
  /** The rules (built-in table by default; see policy-file.ts to load a file). */
  policy?: readonly RuleSource[];
  store: RateLimitStore;
  /** Proxies whose X-Forwarded-For is believed: addresses, CIDRs, loopback/private/linklocal. */
  trustedProxies: readonly string[];
  resolveIdentity: (request: FastifyRequest) => CallerIdentity | Promise<CallerIdentity>;
  clock?: Clock;
  /** Close the store when the app closes (default true). */
  closeStore?: boolean;
}

/**
 * Puts the limiter in front of every route of `app`, 404s included, as an onRequest
 * hook. Call it on the root instance (inside an encapsulated plugin it would cover only
 * that plugin), before authentication's own hooks: a request refused by auth (401)
 * must still count, or guessing keys would be free.
 *
 * Allowed responses carry the RateLimit headers of the tightest rule; refused ones
 * get 429 `{"detail": "Rate limit exceeded: <category> ..."}` with Retry-After. Errors
 * go through the app's error handler (SlipwayError "rate_limited" / "unavailable").
 *
 * @example
 * registerRateLimit(app, { enabled: true, region: "us", store: new MemoryStore(),
 *   trustedProxies: [], resolveIdentity: (req) => auth.identify(req) });
 */
export function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): RateLimiter | undefined {
  if (!options.enabled) return undefined;
  const limiter = new RateLimiter(compilePolicy(options.policy ?? DEFAULT_RULES, options.region), options.store, options.clock ?? systemClock);

  const hook = new LimitHook(limiter, parseTrustedProxies(options.trustedProxies), options.resolveIdentity);
  app.addHook("onRequest", (request, reply, done) => hook.onRequest(request, reply, done));
  if (options.closeStore !== false) app.addHook("onClose", async () => options.store.close());
  return limiter;
}

type Done = (error?: Error) => void;

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * Not counted: static files that are no API call (the web console's page and scripts,
     * a dozen per page load, would otherwise spend the IP catch-all's 100 a minute).
     */
    rateLimitExempt?: boolean;
  }
}

/**
 * The onRequest hook. Written callback-style, with no closure made per request, so
 * that with a synchronous identity and store (the in-memory store) a request costs
 * no promise and no allocation beyond its counters: see bench/ratelimit.ts.
 */
class LimitHook {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly trusted: TrustedProxies,
    private readonly resolveIdentity: RateLimitOptions["resolveIdentity"],
  ) {}

  onRequest(request: FastifyRequest, reply: FastifyReply, done: Done): void {
    if (request.routeOptions.config.rateLimitExempt) return void done();
    let identity: CallerIdentity | Promise<CallerIdentity>;
    try {
      identity = this.resolveIdentity(request);
    } catch (error) {
      return void done(error as Error);
    }
    if (identity instanceof Promise) identity.then((value) => this.evaluate(request, reply, value, done), done);
    else this.evaluate(request, reply, identity, done);
  }

  private evaluate(request: FastifyRequest, reply: FastifyReply, identity: CallerIdentity, done: Done): void {
    let decision: Decision | Promise<Decision>;
    try {
      decision = this.limiter.check({
        method: request.method,
        url: request.url,
        ip: clientIp(request.raw.socket.remoteAddress, request.headers["x-forwarded-for"], this.trusted),
        apiKey: identity.apiKey,
        userId: identity.userId,
      });
    } catch (error) {
      return void done(asHttpError(error));
    }
    if (decision instanceof Promise)
      decision.then(
        (value) => finish(request, reply, value, done),
        (error: unknown) => done(asHttpError(error)),
      );
    else finish(request, reply, decision, done);
  }
}

function finish(request: FastifyRequest, reply: FastifyReply, decision: Decision, done: Done): void {
  // Only a browser's cross-origin request (it carries Origin) reads the expose list.
  // Set here, not in an onSend hook: having any onSend hook cost the bench endpoint
  // about a quarter of its throughput. A CORS layer must add to the list, not replace
  // it (src/http/cors.ts does).
  if (request.headers.origin !== undefined && (decision.outcome === "allowed" || decision.outcome === "rejected")) {
    reply.header("access-control-expose-headers", withExposed(reply.getHeader("access-control-expose-headers"), EXPOSED_HEADERS));
  }
  if (decision.outcome === "allowed") setRateLimitHeaders(reply, decision.report);
  else if (decision.outcome === "rejected") {
    return void done(new SlipwayError("rate_limited", rejectionDetail(decision.report), { headers: rejectionHeaders(decision.report) }));
  }
  done();
}

function asHttpError(error: unknown): Error {
  if (error instanceof StoreUnavailableError) {
    return new SlipwayError("unavailable", "Rate limiter unavailable; retry shortly.", { headers: { "retry-after": "1" } });
  }
  return error as Error;
}
