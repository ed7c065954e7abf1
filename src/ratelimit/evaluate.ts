import { ipIdentity } from "./client-ip.ts";
import { pathForms } from "./path-pattern.ts";
import type { Carried } from "./rule-index.ts";
import type { CompiledPolicy, CompiledRule, IdentityKind } from "./rules.ts";
import type { Clock, CounterState, Hit, HitResult, RateLimitStore } from "./stores/store.ts";

/** What the limiter knows about a request. */
export interface RequestFacts {
  method: string;
  /** The raw request target (path and query). */
  url: string;
  /** Client address (after trusted-proxy resolution). */
  ip: string;
  /** Only a key that authentication accepted; an unknown key counts as none. */
  apiKey?: string;
  /** Only the principal of an authenticated bearer token. */
  userId?: string;
}

/** A rule that applies to a request, with the counter it uses (a Hit for the store). */
interface Applied extends Hit {
  rule: CompiledRule;
}

/** The state of one applied rule after the request, for headers and messages. */
export interface RuleState {
  rule: CompiledRule;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Whole seconds until the window resets, rounded up, at least 1. */
  resetSeconds: number;
}

export type Decision =
  /** No rule applies (an empty policy). */
  | { outcome: "unlimited" }
  /** The store could not answer and its failure mode lets requests through. */
  | { outcome: "unchecked" }
  /** `report` is the tightest rule: fewest requests left, then longest wait. */
  | { outcome: "allowed"; report: RuleState }
  /** `report` is the refusing rule the client must wait longest for. */
  | { outcome: "rejected"; report: RuleState };

/**
 * The rules a request is checked against, by tier (table order plays no part):
 * 1. every specific rule that matches the request and whose identity it carries
 *    (an IP rule applies to everyone; an api-key rule needs a valid key; a user rule
 *    needs an authenticated user id, and counts it together with the IP);
 * 2. if none, the default rule(s) of its identity: API key first, else user id;
 * 3. if it carries neither, or the policy has no default for it: the IP catch-all.
 */
export function applicableRules(policy: CompiledPolicy, facts: RequestFacts): Applied[] {
  const method = facts.method === "HEAD" ? "GET" : facts.method;
  const forms = pathForms(facts.url);
  const identities = new Identities(facts);
  const applied: Applied[] = [];
  for (const rule of policy.index.matching(method, forms, identities)) {
    applied.push(apply(rule, identities));
  }
  if (applied.length) return applied;
  const defaults = facts.apiKey !== undefined && policy.defaultApiKey.length ? policy.defaultApiKey : facts.userId !== undefined ? policy.defaultUser : [];
  const fallback = defaults.length ? defaults : policy.catchAll;
  for (const rule of fallback) applied.push(apply(rule, identities));
  return applied;
}

/** The identities a request carries, each turned into counter-key form once, when first needed. */
class Identities implements Carried {
  private readonly keys: Partial<Record<IdentityKind, string>> = {};
  constructor(private readonly facts: RequestFacts) {}

  carries(kind: IdentityKind): boolean {
    return kind === "ip" || (kind === "api-key" ? this.facts.apiKey !== undefined : this.facts.userId !== undefined);
  }

  key(kind: IdentityKind): string {
    return (this.keys[kind] ??= this.make(kind));
  }

  private make(kind: IdentityKind): string {
    const { apiKey, userId, ip } = this.facts;
    if (kind === "api-key") return `k:${apiKey}`;
    if (kind === "user") return `u:${userId}\u0000${ipIdentity(ip)}`;
    return `i:${ipIdentity(ip)}`;
  }
}

function apply(rule: CompiledRule, identities: Identities): Applied {
  return { rule, key: `${rule.name}\u0000${identities.key(rule.identity)}`, limit: rule.limit, windowMs: rule.windowSeconds * 1000 };
}

/**
 * Evaluates a request: finds its rules, asks the store to check-then-consume all
 * their counters at once, and reports the rule the client should hear about.
 * Stays synchronous when the store is (the in-memory store), to keep its cost low.
 */
export class RateLimiter {
  constructor(
    readonly policy: CompiledPolicy,
    readonly store: RateLimitStore,
    private readonly clock: Clock,
  ) {}

  check(facts: RequestFacts): Decision | Promise<Decision> {
    const applied = applicableRules(this.policy, facts);
    if (applied.length === 0) return { outcome: "unlimited" };
    const now = this.clock();
    const result = this.store.hit(applied, now);
    if (result instanceof Promise) return result.then((value) => decide(applied, value, now));
    return decide(applied, result, now);
  }
}

function decide(applied: Applied[], result: HitResult, now: number): Decision {
  if (result.counters.length === 0) return { outcome: "unchecked" };
  let report: RuleState | undefined;
  let reportReset = 0;
  for (let i = 0; i < applied.length; i++) {
    const rule = applied[i]!.rule;
    const counter: CounterState = result.counters[i]!;
    const remaining = Math.max(0, rule.limit - counter.count);
    // When rejected, only the refusing rules are candidates: the one freeing up last
    // tells the client how long to wait. When allowed, the one with fewest left.
    if (!result.allowed && counter.count < rule.limit) continue;
    const better =
      report === undefined ||
      (result.allowed ? remaining < report.remaining || (remaining === report.remaining && counter.resetAt > reportReset) : counter.resetAt > reportReset);
    if (better) {
      report = { rule, remaining, resetSeconds: Math.max(1, Math.ceil((counter.resetAt - now) / 1000)) };
      reportReset = counter.resetAt;
    }
  }
  return { outcome: result.allowed ? "allowed" : "rejected", report: report! };
}
