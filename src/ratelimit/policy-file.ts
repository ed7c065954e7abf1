import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { parse as parseYaml } from "yaml";
import { PolicyError, checkPolicy } from "./compile.ts";
import { DEFAULT_RULES } from "./default-policy.ts";
import type { IdentityKind, RuleSource, Tier } from "./rules.ts";

/**
 * Policy files (YAML or JSON) replace or extend the built-in table:
 *
 *   mode: extend          # default; "replace" drops the built-in table
 *   rules:
 *     - name: commits-api-key      # a built-in name: the fields given override it
 *       limit: { us: 20000/60, eu: 4000/60 }
 *     - name: runs-stats-api-key
 *       remove: true               # extend mode: drop a built-in rule
 *     - name: exports-api-key      # a new name: every field is required
 *       category: Exports
 *       identity: x-api-key        # api-key | user | ip, or the table's spelling
 *       match: ["POST /exports"]
 *       limit: 5/60
 *
 * Every problem is reported as a PolicyError naming the file and the rule, so a bad
 * file stops start-up with a message the operator can act on.
 */
export async function loadPolicyFile(path: string, base: readonly RuleSource[] = DEFAULT_RULES): Promise<RuleSource[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new PolicyError(`rate-limit policy file ${path}: cannot be read (${(error as Error).message})`);
  }
  return policyFromText(text, path, base);
}

/** Parses and checks a policy document; `fileName` picks JSON or YAML and labels messages. */
export function policyFromText(text: string, fileName: string, base: readonly RuleSource[] = DEFAULT_RULES): RuleSource[] {
  const where = `rate-limit policy file ${fileName}`;
  let document: unknown;
  try {
    document = extname(fileName).toLowerCase() === ".json" ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new PolicyError(`${where}: not valid ${extname(fileName).toLowerCase() === ".json" ? "JSON" : "YAML"}: ${(error as Error).message}`);
  }
  if (!isObject(document)) throw new PolicyError(`${where}: expected an object with a "rules" list`);
  refuseUnknown(document, ["mode", "rules"], where);
  const mode = document.mode ?? "extend";
  if (mode !== "extend" && mode !== "replace") throw new PolicyError(`${where}: mode must be "extend" or "replace", got ${JSON.stringify(mode)}`);
  if (!Array.isArray(document.rules)) throw new PolicyError(`${where}: "rules" must be a list`);

  const labels = new Map<RuleSource, string>();
  const merged: RuleSource[] = mode === "replace" ? [] : [...base];
  for (const rule of merged) labels.set(rule, `built-in rule "${rule.name}"`);

  document.rules.forEach((raw: unknown, index: number) => {
    const name = isObject(raw) && typeof raw.name === "string" ? raw.name : undefined;
    const label = `${where}: rule ${index + 1}${name ? ` ("${name}")` : ""}`;
    const entry = readEntry(raw, label);
    const existing = merged.findIndex((rule) => rule.name === entry.name);
    if (entry.remove) {
      if (mode === "replace") throw new PolicyError(`${label}: "remove" only makes sense in extend mode`);
      if (existing === -1) throw new PolicyError(`${label}: there is no built-in rule "${entry.name}" to remove`);
      merged.splice(existing, 1);
      return;
    }
    if (existing !== -1 && labels.get(merged[existing]!)?.startsWith(where)) {
      throw new PolicyError(`${label}: the name "${entry.name}" is used by an earlier rule of this file`);
    }
    const rule = existing === -1 ? complete(entry.fields, label) : ({ ...merged[existing]!, ...entry.fields } as RuleSource);
    labels.set(rule, label);
    if (existing === -1) merged.push(rule);
    else merged[existing] = rule;
  });

  checkPolicy(merged, (rule) => labels.get(rule) ?? `rule "${rule.name}"`);
  return merged;
}

const RULE_KEYS = ["name", "category", "tier", "match", "identity", "limit", "remove"];
const IDENTITY_SPELLINGS: Record<string, IdentityKind> = {
  "api-key": "api-key",
  "x-api-key": "api-key",
  user: "user",
  "x-user-id": "user",
  "x-user-id + ip": "user",
  ip: "ip",
};

interface Entry {
  name: string;
  remove: boolean;
  fields: Partial<RuleSource> & { name: string };
}

/** Checks one entry's shape; the values themselves are checked when the policy compiles. */
function readEntry(raw: unknown, label: string): Entry {
  if (!isObject(raw)) throw new PolicyError(`${label}: expected an object`);
  refuseUnknown(raw, RULE_KEYS, label);
  if (typeof raw.name !== "string" || !raw.name) throw new PolicyError(`${label}: "name" is required`);
  const fields: Entry["fields"] = { name: raw.name };
  if (raw.remove !== undefined && typeof raw.remove !== "boolean") throw new PolicyError(`${label}: "remove" must be true or false`);
  if (raw.remove === true) {
    const extra = Object.keys(raw).filter((key) => key !== "name" && key !== "remove");
    if (extra.length) throw new PolicyError(`${label}: a removed rule takes no other fields (found ${extra.join(", ")})`);
    return { name: raw.name, remove: true, fields };
  }
  if (raw.category !== undefined) fields.category = stringField(raw.category, "category", label);
  if (raw.tier !== undefined) fields.tier = stringField(raw.tier, "tier", label) as Tier;
  if (raw.identity !== undefined) {
    const spelled = stringField(raw.identity, "identity", label).trim().toLowerCase().replace(/\s+/g, " ");
    const identity = IDENTITY_SPELLINGS[spelled];
    if (!identity) throw new PolicyError(`${label}: identity "${raw.identity}" is not one of api-key (x-api-key), user (x-user-id + IP), ip`);
    fields.identity = identity;
  }
  if (raw.match !== undefined) {
    const match = typeof raw.match === "string" ? [raw.match] : raw.match;
    if (!Array.isArray(match) || !match.every((item) => typeof item === "string")) {
      throw new PolicyError(`${label}: "match" must be a string or a list of strings`);
    }
    fields.match = match;
  }
  if (raw.limit !== undefined) {
    if (typeof raw.limit !== "string" && !isObject(raw.limit)) throw new PolicyError(`${label}: "limit" must be "count/seconds" or { us: ..., eu: ... }`);
    fields.limit = raw.limit as RuleSource["limit"];
  }
  return { name: raw.name, remove: false, fields };
}

function complete(fields: Entry["fields"], label: string): RuleSource {
  const tier = fields.tier ?? "specific";
  const required = ["category", "identity", "limit", ...(tier === "specific" ? ["match"] : [])];
  const missing = required.filter((key) => fields[key as keyof RuleSource] === undefined);
  if (missing.length) throw new PolicyError(`${label}: a new rule needs ${missing.map((key) => `"${key}"`).join(", ")}`);
  return fields as RuleSource;
}

function stringField(value: unknown, key: string, label: string): string {
  if (typeof value !== "string") throw new PolicyError(`${label}: "${key}" must be a string`);
  return value;
}

function refuseUnknown(object: Record<string, unknown>, allowed: string[], label: string): void {
  const unknown = Object.keys(object).filter((key) => !allowed.includes(key));
  if (unknown.length) throw new PolicyError(`${label}: unknown field ${unknown.map((key) => `"${key}"`).join(", ")} (allowed: ${allowed.join(", ")})`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
