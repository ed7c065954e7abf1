import type { CompiledRule, IdentityKind, RequestMatcher } from "./rules.ts";

/** Which identities a request carries. */
export interface Carried {
  carries(kind: IdentityKind): boolean;
}

interface Entry {
  rule: CompiledRule;
  /** Position in the policy, so results come back in policy order. */
  order: number;
  matcher: RequestMatcher;
}

/**
 * The specific rules, arranged so a request is tested only against matchers that
 * could match it. Plain and "exactly" paths are filed under their first segment
 * ("/repos/x" under "repos"); the rest (containing, suffix, any path, or a path
 * starting with {uuid}) are always tested. With the built-in table a request meets
 * about six matchers instead of some thirty: this runs on every request.
 */
export class RuleIndex {
  private readonly bySegment = new Map<string, Entry[]>();
  private readonly scanned: Entry[] = [];

  constructor(rules: readonly CompiledRule[]) {
    rules.forEach((rule, order) => {
      for (const matcher of rule.matchers) {
        const entry = { rule, order, matcher };
        if (matcher.firstSegment === undefined) this.scanned.push(entry);
        else {
          const list = this.bySegment.get(matcher.firstSegment) ?? [];
          list.push(entry);
          this.bySegment.set(matcher.firstSegment, list);
        }
      }
    });
  }

  /**
   * The rules whose identity the request carries and that match `method` and any
   * of the path `forms`, in policy order.
   */
  matching(method: string, forms: readonly string[], identity: Carried): CompiledRule[] {
    const found: Entry[] = [];
    this.test(this.scanned, method, forms, identity, found);
    for (const form of forms) {
      const slash = form.indexOf("/", 1);
      const list = this.bySegment.get(slash === -1 ? form.slice(1) : form.slice(1, slash));
      if (list) this.test(list, method, forms, identity, found);
    }
    if (found.length > 1) found.sort((a, b) => a.order - b.order);
    return found.map((entry) => entry.rule);
  }

  private test(entries: Entry[], method: string, forms: readonly string[], identity: Carried, found: Entry[]): void {
    // Plain loops, no callbacks: this is the per-request hot path.
    for (const entry of entries) {
      const { matcher, rule } = entry;
      if (matcher.method !== undefined && matcher.method !== method) continue;
      if (!identity.carries(rule.identity) || includesRule(found, rule)) continue;
      if (matcher.path === undefined) {
        found.push(entry);
        continue;
      }
      for (const form of forms) {
        if (matcher.path(form)) {
          found.push(entry);
          break;
        }
      }
    }
  }
}

function includesRule(entries: Entry[], rule: CompiledRule): boolean {
  for (const entry of entries) if (entry.rule === rule) return true;
  return false;
}
