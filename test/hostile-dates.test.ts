import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isStorableDateTime } from "../src/http/date-time.ts";
import { BACKENDS } from "./support/backends.ts";
import { buildRequest, operationsOf, seededRandom, send, type Hostile, type Operation, type Target } from "./support/fuzz.ts";
import { startFuzzServers, type FuzzServers } from "./support/fuzz-servers.ts";
import { githubDeployment } from "./controlplane/deployments-fixture.ts";

/**
 * Dates into every date-time field of both servers' /openapi.json, on both storage back
 * ends (issue 31, item 7). Each field gets the same seeded mix: the edges of the range
 * (src/http/date-time.ts: years 0100 to 9999 UTC), year 0, leap seconds, offsets that
 * push an instant out, days that do not exist, PostgreSQL's own words (`infinity`,
 * `epoch`), and random RFC 3339-like texts. No answer may be a 5xx; a date outside the
 * range answers 422 naming the field, and one inside it is served.
 */
const SEED = 31;
const RANDOM_DATES = Number(process.env.SLIPWAY_FUZZ_DATES ?? 40);

const FIXED = [
  "0000-01-01T00:00:00Z",
  "0001-01-01T00:00:00Z",
  "0099-12-31T23:59:59.999Z",
  "0100-01-01T00:00:00Z",
  "0100-01-01T00:00:00+00:01",
  "9999-12-31T23:59:59.999Z",
  "9999-12-31T23:59:59-00:01",
  "2016-12-31T23:59:60Z",
  "2023-02-29T00:00:00Z",
  "2024-02-29T00:00:00Z",
  "2024-06-01T24:00:00Z",
  "2024-06-01T12:00:00+24:00",
  "2024-06-01T12:00:00+01",
  "2024-06-01T12:00:00",
  "2024-06-01",
  "+010000-01-01T00:00:00Z",
  "-000001-01-01T00:00:00Z",
  "infinity",
  "-infinity",
  "epoch",
  "now",
  "1714000000",
];

const pad = (value: number, width: number) => String(value).padStart(width, "0");

/** A date-time-like text: mostly well formed, with each part sometimes just out of its range. */
function randomDate(random: () => number): string {
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const oneOf = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const year = random() < 0.4 ? oneOf([0, 1, 99, 100, 101, 1969, 1970, 9998, 9999]) : between(0, 9999);
  const month = random() < 0.1 ? oneOf([0, 13]) : between(1, 12);
  const day = random() < 0.1 ? oneOf([0, 29, 30, 31, 32]) : between(1, 28);
  const hour = random() < 0.05 ? 24 : between(0, 23);
  const second = random() < 0.1 ? 60 : between(0, 59);
  const fraction = random() < 0.3 ? `.${pad(between(0, 999_999_999), between(1, 9)).slice(0, 9)}` : "";
  const offset = () => `${oneOf(["+", "-"])}${pad(random() < 0.1 ? 24 : between(0, 14), 2)}${oneOf([":", ""])}${pad(oneOf([0, 30, 45, 59, 60]), 2)}`;
  const zone = oneOf(["Z", "z", "+00:00", offset(), offset(), ""]);
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}${oneOf(["T", "t", " "])}${pad(hour, 2)}:${pad(between(0, 59), 2)}:${pad(second, 2)}${fraction}${zone}`;
}

function dateCorpus(): string[] {
  const random = seededRandom(SEED);
  const dates = [...FIXED];
  for (let i = 0; i < RANDOM_DATES; i++) dates.push(randomDate(random));
  return dates;
}

type Schema = Record<string, any>;

function resolve(doc: Schema, schema: Schema | undefined): Schema {
  let current = schema ?? {};
  for (let hops = 0; current.$ref && hops < 10; hops++) current = doc.components?.schemas?.[String(current.$ref).split("/").pop()!] ?? {};
  return current;
}

function isDateTime(doc: Schema, schema: Schema | undefined): boolean {
  const s = resolve(doc, schema);
  if (s.format === "date-time") return true;
  return [...(s.anyOf ?? []), ...(s.oneOf ?? [])].some((branch: Schema) => isDateTime(doc, branch));
}

/** Every date-time field of the document: top-level body properties and query parameters. */
function dateTargets(doc: Schema): { op: Operation; target: Target }[] {
  const out: { op: Operation; target: Target }[] = [];
  for (const op of operationsOf(doc)) {
    for (const q of op.query) if (isDateTime(doc, q.schema)) out.push({ op, target: { where: "query", name: q.name } });
    for (const [name, schema] of Object.entries<Schema>(op.body?.properties ?? {})) {
      if (isDateTime(doc, schema)) out.push({ op, target: { where: "body", name } });
    }
  }
  return out;
}

interface Outcome {
  sent: number;
  fields: string[];
  wrong: string[];
}

async function fuzzDates(
  base: string,
  doc: Schema,
  pathValues: (op: Operation) => Promise<Record<string, string>>,
  known: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Outcome> {
  const outcome: Outcome = { sent: 0, fields: [], wrong: [] };
  for (const { op, target } of dateTargets(doc)) {
    outcome.fields.push(`${op.method} ${op.path} ${target.where}.${target.name}`);
    const ids = await pathValues(op);
    for (const date of dateCorpus()) {
      const value: Hostile = { name: date, json: JSON.stringify(date), url: encodeURIComponent(date) };
      const request = buildRequest(doc, op, target, value, ids, known);
      outcome.sent++;
      const { status, text } = await send(base, request, headers);
      const storable = isStorableDateTime(date);
      const named = text.includes(target.name);
      if (status >= 500 || (storable ? status !== 200 : status !== 422 || !named)) outcome.wrong.push(`${request.label}: ${status} ${text.slice(0, 200)}`);
    }
  }
  return outcome;
}

describe.each(BACKENDS)("dates into every date-time field on %s", (backend) => {
  let servers: FuzzServers;
  beforeAll(async () => {
    servers = await startFuzzServers(backend, { workers: 1 });
  });
  afterAll(async () => servers?.close());

  it("the agent server refuses a date outside the range with 422 and serves the rest", async () => {
    const { agent } = servers;
    const doc = await (await fetch(`${agent.url}/openapi.json`)).json();
    const pathValues = async (op: Operation) => {
      const ids: Record<string, string> = {};
      if (op.pathParams.includes("thread_id")) ids.thread_id = (await agent.client.threads.create()).thread_id;
      if (op.pathParams.includes("cron_id")) ids.cron_id = (await agent.client.crons.create("agent", { schedule: "0 0 1 1 *" })).cron_id;
      return ids;
    };
    const outcome = await fuzzDates(agent.url, doc, pathValues, { assistant_id: "agent", schedule: "0 0 1 1 *" });
    expect(outcome.fields).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^POST \/runs\/crons body\.end_time$/),
        expect.stringMatching(/^PATCH \/runs\/crons\/\{cron_id\} body\.end_time$/),
      ]),
    );
    expect(outcome.sent).toBeGreaterThan(100);
    expect(outcome.wrong).toEqual([]);
  });

  it("the control plane refuses a date outside the range with 422 and serves the rest", async () => {
    const { cpUrl, tenant } = servers;
    const doc = await (await fetch(`${cpUrl}/openapi.json`)).json();
    let n = 0;
    const pathValues = async (op: Operation) => {
      const ids: Record<string, string> = {};
      if (op.pathParams.includes("deployment_id")) {
        ids.deployment_id = (await tenant.call("POST", "/v2/deployments", githubDeployment(`dates-${backend}-${++n}`))).json().id;
        ids.revision_id = (await tenant.call("GET", `/v2/deployments/${ids.deployment_id}/revisions`)).json().resources[0]?.id;
      }
      return ids;
    };
    const outcome = await fuzzDates(cpUrl, doc, pathValues, {}, tenant.headers);
    expect(outcome.fields.filter((field) => field.includes("/v1/projects/")).length).toBe(6);
    expect(outcome.sent).toBeGreaterThan(200);
    expect(outcome.wrong).toEqual([]);
  });
});
