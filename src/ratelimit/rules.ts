import type { RuleIndex } from "./rule-index.ts";

/**
 * The vocabulary of rate-limit policies: how a rule is written (RuleSource, the shape
 * of the built-in table and of policy files) and what it becomes once compiled for
 * one region (CompiledRule).
 */

export type Region = "us" | "eu";
export const REGIONS: readonly Region[] = ["us", "eu"];

/**
 * Who a counter belongs to. `user` is the authenticated user id together with the
 * client IP (the table's "x-user-id + IP").
 */
export type IdentityKind = "api-key" | "user" | "ip";

/**
 * Evaluation tier. Specific rules are checked when they match; a default rule only
 * when no specific rule matched; the catch-all only when the caller carries neither
 * a valid API key nor a user id (or the policy has no default for its identity).
 */
export type Tier = "specific" | "default" | "catch-all";

/** A limit written as "count/seconds", e.g. "100/60". */
type LimitText = string;

/** One rule as written in the built-in table or a policy file. */
export interface RuleSource {
  /** Unique id; names the counter and the `RateLimit-Policy` item. */
  name: string;
  /** Human name, quoted in the 429 body (e.g. "Run query (API)"). */
  category: string;
  /** Defaults to "specific". */
  tier?: Tier;
  // For specific rules: alternatives, any of which matches. Each is an optional
  // method and an optional path pattern: "OPTIONS", "/info", "POST containing /charts",
  // "DELETE */trigger", "GET exactly /runs/{uuid}". See path-pattern.ts.
  match?: string[];
  identity: IdentityKind;
  /** The same limit in both regions, or one per region. */
  limit: LimitText | Record<Region, LimitText>;
}

/** A rule ready for evaluation in one region. */
export interface CompiledRule {
  name: string;
  category: string;
  tier: Tier;
  identity: IdentityKind;
  /** Empty for default and catch-all rules, which match every request. */
  matchers: RequestMatcher[];
  limit: number;
  windowSeconds: number;
}

/** One alternative of a rule's `match` list. */
export interface RequestMatcher {
  /** Upper-case method, or undefined for any method. */
  method?: string;
  /** Tests a normalized path; undefined for any path. */
  path?: (path: string) => boolean;
  /** The text it was compiled from, for messages. */
  text: string;
  /**
   * For a plain or "exactly" path: its first segment, which every path it matches
   * starts with. Lets the rule index look such matchers up instead of testing them all.
   */
  firstSegment?: string;
}

/** A policy compiled for one region, split by tier so evaluation need not scan the rest. */
export interface CompiledPolicy {
  region: Region;
  specific: CompiledRule[];
  /** The specific rules, indexed for lookup by method and path. */
  index: RuleIndex;
  defaultApiKey: CompiledRule[];
  defaultUser: CompiledRule[];
  catchAll: CompiledRule[];
}
