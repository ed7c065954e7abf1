import { MatchSyntaxError, parseMatch } from "./path-pattern.ts";
import { RuleIndex } from "./rule-index.ts";
import { REGIONS, type CompiledPolicy, type CompiledRule, type IdentityKind, type Region, type RuleSource, type Tier } from "./rules.ts";

/** A policy that cannot be used; the message names the rule and what is wrong. */
export class PolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PolicyError";
  }
}

/** What is wrong with one rule; compilePolicy turns it into a PolicyError naming the rule. */
class RuleProblem extends Error {}

const TIERS: readonly Tier[] = ["specific", "default", "catch-all"];
const IDENTITIES: readonly IdentityKind[] = ["api-key", "user", "ip"];
/** Longest window a rule may have: one day. Longer windows are almost surely typos. */
const MAX_WINDOW_SECONDS = 86_400;

/**
 * Checks every rule and compiles the policy for one region. `describe` labels a rule in
 * messages (the policy-file loader adds the file name and position).
 */
export function compilePolicy(
  rules: readonly RuleSource[],
  region: Region,
  describe: (rule: RuleSource, index: number) => string = (rule) => `rule "${rule.name}"`,
): CompiledPolicy {
  const specific: CompiledRule[] = [];
  const policy: Omit<CompiledPolicy, "index"> = { region, specific, defaultApiKey: [], defaultUser: [], catchAll: [] };
  const seen = new Set<string>();
  rules.forEach((source, index) => {
    let rule: CompiledRule;
    try {
      if (seen.has(source.name)) throw new RuleProblem(`the name "${source.name}" is used by an earlier rule`);
      seen.add(source.name);
      rule = compileRule(source, region);
    } catch (error) {
      if (error instanceof RuleProblem) throw new PolicyError(`${describe(source, index)}: ${error.message}`);
      throw error;
    }
    if (rule.tier === "specific") policy.specific.push(rule);
    else if (rule.tier === "catch-all") policy.catchAll.push(rule);
    else if (rule.identity === "api-key") policy.defaultApiKey.push(rule);
    else policy.defaultUser.push(rule);
  });
  return { ...policy, index: new RuleIndex(specific) };
}

/** Compiles for every region, so a bad EU limit fails start-up in the US too. */
export function checkPolicy(rules: readonly RuleSource[], describe?: (rule: RuleSource, index: number) => string): void {
  for (const region of REGIONS) compilePolicy(rules, region, describe);
}

function compileRule(source: RuleSource, region: Region): CompiledRule {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(source.name ?? "")) {
    throw new RuleProblem(`name must be letters, digits, ".", "_" or "-" (it appears in the RateLimit headers)`);
  }
  if (typeof source.category !== "string" || !source.category.trim()) throw new RuleProblem("category is missing");
  const tier = source.tier ?? "specific";
  if (!TIERS.includes(tier)) throw new RuleProblem(`tier "${tier}" is not one of ${TIERS.join(", ")}`);
  if (!IDENTITIES.includes(source.identity)) {
    throw new RuleProblem(`identity "${source.identity}" is not one of ${IDENTITIES.join(", ")}`);
  }
  if (tier === "default" && source.identity === "ip") {
    throw new RuleProblem(`a default rule is for identity api-key or user; the IP fallback is tier "catch-all"`);
  }
  if (tier === "catch-all" && source.identity !== "ip") throw new RuleProblem(`the catch-all tier counts by identity "ip"`);
  const match = source.match ?? [];
  if (tier === "specific" && match.length === 0) throw new RuleProblem("a specific rule needs a non-empty match list");
  if (tier !== "specific" && match.length > 0) throw new RuleProblem(`a ${tier} rule matches every request; remove its match list`);
  const { limit, windowSeconds } = parseLimit(source.limit, region);
  return {
    name: source.name,
    category: source.category,
    tier,
    identity: source.identity,
    matchers: match.map((text) => {
      if (typeof text !== "string") throw new RuleProblem(`match entries are strings, got ${JSON.stringify(text)}`);
      try {
        return parseMatch(text);
      } catch (error) {
        if (error instanceof MatchSyntaxError) throw new RuleProblem(`match "${text}": ${error.message}`);
        throw error;
      }
    }),
    limit,
    windowSeconds,
  };
}

function parseLimit(limit: RuleSource["limit"], region: Region): { limit: number; windowSeconds: number } {
  let text: unknown = limit;
  if (limit !== null && typeof limit === "object") {
    const keys = Object.keys(limit);
    const stray = keys.filter((key) => !REGIONS.includes(key as Region));
    if (stray.length) throw new RuleProblem(`limit: unknown region ${stray.map((k) => `"${k}"`).join(", ")} (regions are us, eu)`);
    const missing = REGIONS.filter((key) => !keys.includes(key));
    if (missing.length) throw new RuleProblem(`limit: no value for region ${missing.join(", ")}`);
    text = limit[region];
  }
  const parsed = typeof text === "string" ? /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text) : null;
  if (!parsed) throw new RuleProblem(`limit ${JSON.stringify(text)} is not "count/seconds" such as "100/60"`);
  const count = Number(parsed[1]);
  const seconds = Number(parsed[2]);
  if (!Number.isSafeInteger(count) || count < 1) throw new RuleProblem(`limit "${text}": the count must be at least 1`);
  if (seconds < 1 || seconds > MAX_WINDOW_SECONDS) throw new RuleProblem(`limit "${text}": the interval must be 1 to ${MAX_WINDOW_SECONDS} seconds`);
  return { limit: count, windowSeconds: seconds };
}
