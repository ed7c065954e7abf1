import { afterEach, describe, expect, it } from "vitest";
import { ACTIVE_STATUSES } from "../../src/agentserver/run-statuses.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { BACKENDS, freshBackend } from "../support/backends.ts";

/**
 * The SQL functions of the migrations (enqueue_run, finish_run) write the active
 * statuses out, as plpgsql must: they say what run-statuses.ts says. Read from the
 * functions as installed (pg_proc), so an overload an older migration left counts too.
 */
describe.each(BACKENDS)("run statuses inside the SQL functions on %s", (backend) => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function functionBodies(): Promise<Array<{ name: string; body: string }>> {
    const target = freshBackend(backend, "statuses");
    const db = await openDatabase({ ...target, component: "agent" });
    cleanup.push(() => db.close());
    return db.query<{ name: string; body: string }>(
      `SELECT p.proname AS name, p.prosrc AS body FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = $1 AND p.prosrc ILIKE '%status%' ORDER BY p.proname`,
      [db.schema],
    );
  }

  const literals = (list: string) => [...list.matchAll(/'([^']*)'/g)].map((m) => m[1]);

  it("list the active statuses as ACTIVE_STATUSES does", async () => {
    const lists: Array<{ name: string; statuses: string[] }> = [];
    for (const { name, body } of await functionBodies()) {
      for (const match of body.matchAll(/status\s+IN\s*\(([^)]*)\)/gi)) lists.push({ name, statuses: literals(match[1]!) });
    }
    // enqueue_run (0025: the older bodies were dropped or now hand over to it) and finish_run
    // (0009, 0025; 0027 dropped 0007's). The snapshot (migrations/agent.schema.sql) lists them.
    expect(lists.length).toBeGreaterThanOrEqual(3);
    for (const list of lists) expect(list).toEqual({ name: list.name, statuses: [...ACTIVE_STATUSES] });
  });
});
