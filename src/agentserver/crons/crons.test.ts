import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../../../test/support/backends.ts";
import { startTestAgentServer, type TestAgentServer } from "../../../test/support/agent-server.ts";
import { call } from "../assistants/testing.ts";
import { readQueueAnnouncement, runsChannel } from "../runs/announcements.ts";
import { listFirings } from "./repository.ts";

/**
 * The crons API through the official SDK (`client.crons`), as a client written for the
 * vendor's server uses it, on a real agent server over each back end; raw requests only
 * where the SDK hides a status or a header.
 */
const input = (text: string) => ({ messages: [{ role: "human", content: text }] });
const lastText = (values: unknown) => (values as { messages?: Array<{ content: string }> })?.messages?.at(-1)?.content;

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A schedule (six fields, seconds last) that fires once, `seconds` from now, and then a day later. */
function onceIn(seconds: number): string {
  const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + seconds * 1000);
  return `${at.getUTCMinutes()} ${at.getUTCHours()} * * * ${at.getUTCSeconds()}`;
}

/** The wall-clock time of `iso` in `timeZone`, as "HH:MM:SS". */
function wallTime(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" }).format(new Date(iso));
}

describe.each(BACKENDS)("crons API on %s", (backend) => {
  let t: TestAgentServer;
  let agentId: string;
  const raw = (method: string, path: string, body?: unknown) => call(t.url, method, path, body);

  beforeAll(async () => {
    t = await startTestAgentServer(backend, { workers: 4 });
    agentId = (await t.client.assistants.get("agent")).assistant_id;
  });
  afterAll(async () => t?.close());

  it("creates a stateless cron with the vendor's fields and defaults", async () => {
    const endTime = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const cron = await t.client.crons.create("agent", {
      schedule: "0 9 * * *",
      timezone: "America/New_York",
      endTime,
      input: input("good morning"),
      metadata: { suite: "create" },
      config: { tags: ["daily"] },
    });
    expect(cron.cron_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(cron).toMatchObject({
      assistant_id: agentId,
      thread_id: null,
      schedule: "0 9 * * *",
      timezone: "America/New_York",
      on_run_completed: "delete",
      enabled: true,
      user_id: null,
      metadata: { suite: "create" },
    });
    expect(new Date(cron.end_time!).toISOString()).toBe(endTime);
    expect(cron.payload).toMatchObject({ assistant_id: "agent", schedule: "0 9 * * *", input: input("good morning"), config: { tags: ["daily"] } });
    // The next 09:00 in New York, within a day.
    const next = cron.next_run_date!;
    expect(wallTime(next, "America/New_York")).toBe("09:00:00");
    expect(Date.parse(next) - Date.now()).toBeGreaterThan(0);
    expect(Date.parse(next) - Date.now()).toBeLessThanOrEqual(86_400_000);

    const fetched = await raw("GET", `/runs/crons/${cron.cron_id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(cron);
  });

  it("creates a thread cron, and answers 404 for a thread or assistant that does not exist", async () => {
    const thread = await t.client.threads.create();
    const cron = await t.client.crons.createForThread(thread.thread_id, agentId, {
      schedule: "*/5 * * * *",
      multitaskStrategy: "reject",
      onRunCompleted: "keep",
    });
    expect(cron).toMatchObject({ thread_id: thread.thread_id, assistant_id: agentId, on_run_completed: null, enabled: true });
    expect(cron.payload).toMatchObject({ multitask_strategy: "reject" });
    expect(new Date(cron.next_run_date!).getUTCMinutes() % 5).toBe(0);

    const noThread = randomUUID();
    await expect(t.client.crons.createForThread(noThread, "agent", { schedule: "* * * * *" })).rejects.toThrow(`Thread ${noThread} not found`);
    await expect(t.client.crons.create("no-such-graph", { schedule: "* * * * *" })).rejects.toThrow(/HTTP 404.*no-such-graph/);
  });

  it("refuses with 422 naming the field what it cannot honour", async () => {
    const thread = await t.client.threads.create();
    const cases: Array<[string, unknown, RegExp]> = [
      ["/runs/crons", { assistant_id: "agent", schedule: "61 * * * *" }, /^schedule: minute: 61 is outside 0-59/],
      ["/runs/crons", { assistant_id: "agent", schedule: "0 0 L * *" }, /^schedule: day of month: "L" .* not supported/],
      ["/runs/crons", { assistant_id: "agent", schedule: "0 0 1 1 * 0 2030" }, /^schedule: a seventh \(year\) field/],
      ["/runs/crons", { assistant_id: "agent", schedule: "0 0 30 2 *" }, /^schedule: never fires/],
      ["/runs/crons", { assistant_id: "agent", schedule: "* * * * *", timezone: "Mars/Base" }, /^timezone: unknown time zone "Mars\/Base"/],
      ["/runs/crons", { assistant_id: "agent", schedule: "* * * * *", end_time: "tomorrow" }, /end_time/],
      ["/runs/crons", { assistant_id: "agent", schedule: "* * * * *", on_run_completed: "archive" }, /on_run_completed/],
      ["/runs/crons", { assistant_id: "agent", schedule: "* * * * *", command: { resume: 1 } }, /command/],
      ["/runs/crons", { assistant_id: "agent", schedule: "* * * * *", webhook: "ftp://example.com/hook" }, /^webhook: must use http or https/],
      [
        `/threads/${thread.thread_id}/runs/crons`,
        { assistant_id: "agent", schedule: "* * * * *", on_run_completed: "delete" },
        /^on_run_completed: "delete" applies to crons without a thread/,
      ],
      [`/threads/${thread.thread_id}/runs/crons`, { assistant_id: "agent", schedule: "* * * * *", multitask_strategy: "queue" }, /multitask_strategy/],
    ];
    for (const [path, body, detail] of cases) {
      const answer = await raw("POST", path, body);
      expect([JSON.stringify(body), answer.status]).toEqual([JSON.stringify(body), 422]);
      expect(String(answer.body.detail)).toMatch(detail);
    }
    expect(await t.client.crons.count({ threadId: thread.thread_id })).toBe(0);
  });

  it("searches and counts by assistant, thread, enabled and metadata, with sorting, paging and select", async () => {
    const suite = randomUUID();
    const thread = await t.client.threads.create();
    // Daily at the next three whole hours: b comes due first, then c, then a, whatever the time of day.
    const hourFromNow = (hours: number) => `0 ${(new Date().getUTCHours() + hours) % 24} * * *`;
    const a = await t.client.crons.create("agent", { schedule: hourFromNow(3), metadata: { suite, n: 1 } });
    const b = await t.client.crons.createForThread(thread.thread_id, "agent", { schedule: hourFromNow(1), metadata: { suite, n: 2 } });
    const c = await t.client.crons.create("slow", { schedule: hourFromNow(2), metadata: { suite, n: 3 }, enabled: false });
    const ids = (crons: Array<{ cron_id?: string }>) => crons.map((cron) => cron.cron_id);

    expect(new Set(ids(await t.client.crons.search({ metadata: { suite } })))).toEqual(new Set([a.cron_id, b.cron_id, c.cron_id]));
    expect(ids(await t.client.crons.search({ metadata: { suite }, threadId: thread.thread_id }))).toEqual([b.cron_id]);
    expect(new Set(ids(await t.client.crons.search({ metadata: { suite }, assistantId: "agent" })))).toEqual(new Set([a.cron_id, b.cron_id]));
    expect(ids(await t.client.crons.search({ metadata: { suite }, assistantId: c.assistant_id }))).toEqual([c.cron_id]);
    expect(ids(await t.client.crons.search({ metadata: { suite }, enabled: false }))).toEqual([c.cron_id]);
    expect(ids(await t.client.crons.search({ metadata: { suite }, sortBy: "next_run_date", sortOrder: "asc" }))).toEqual([b.cron_id, c.cron_id, a.cron_id]);
    expect(ids(await t.client.crons.search({ metadata: { suite }, sortBy: "created_at", sortOrder: "desc" }))).toEqual([c.cron_id, b.cron_id, a.cron_id]);

    const page = await raw("POST", "/runs/crons/search", { metadata: { suite }, limit: 2, sort_by: "created_at", sort_order: "asc" });
    expect(ids(page.body)).toEqual([a.cron_id, b.cron_id]);
    expect(page.headers.get("x-pagination-total")).toBe("3");
    expect(page.headers.get("x-pagination-next")).toBe("2");
    const last = await raw("POST", "/runs/crons/search", { metadata: { suite }, limit: 2, offset: 2, sort_by: "created_at", sort_order: "asc" });
    expect(ids(last.body)).toEqual([c.cron_id]);
    expect(last.headers.get("x-pagination-next")).toBeNull();

    const selected = await t.client.crons.search({ metadata: { suite }, select: ["cron_id", "enabled"], sortBy: "created_at", sortOrder: "asc" });
    expect(selected).toEqual([
      { cron_id: a.cron_id, enabled: true },
      { cron_id: b.cron_id, enabled: true },
      { cron_id: c.cron_id, enabled: false },
    ]);

    expect(await t.client.crons.count({ metadata: { suite } })).toBe(3);
    expect(await t.client.crons.count({ metadata: { suite }, assistantId: "agent" })).toBe(2);
    expect(await t.client.crons.count({ threadId: thread.thread_id })).toBe(1);
    expect((await raw("POST", "/runs/crons/count")).status).toBe(200);
    expect((await raw("POST", "/runs/crons/search", { sort_by: "schedule" })).status).toBe(422);
  });

  it("updates a cron: new times count from now, metadata merges, end_time null clears", async () => {
    const cron = await t.client.crons.create("agent", {
      schedule: "0 0 1 1 *",
      metadata: { suite: "patch", keep: "me" },
      endTime: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(cron.next_run_date).toBeNull(); // 1 January is past the end time
    const updated = await t.client.crons.update(cron.cron_id, {
      schedule: "30 * * * *",
      timezone: "Asia/Kolkata",
      endTime: null,
      metadata: { added: true },
      input: input("patched"),
      onRunCompleted: "keep",
      enabled: false,
    } as Parameters<typeof t.client.crons.update>[1]);
    expect(updated).toMatchObject({
      schedule: "30 * * * *",
      timezone: "Asia/Kolkata",
      end_time: null,
      enabled: false,
      on_run_completed: "keep",
      metadata: { suite: "patch", keep: "me", added: true },
    });
    expect(updated.payload).toMatchObject({ input: input("patched"), schedule: "30 * * * *", metadata: { suite: "patch", keep: "me", added: true } });
    expect(updated.payload).not.toHaveProperty("end_time");
    // :30 in Kolkata (UTC+05:30) is :00 in UTC, within the hour.
    expect(new Date(updated.next_run_date!).getUTCMinutes()).toBe(0);
    expect(Date.parse(updated.next_run_date!) - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect(Date.parse(updated.updated_at)).toBeGreaterThanOrEqual(Date.parse(cron.updated_at));
    expect((await raw("GET", `/runs/crons/${cron.cron_id}`)).body).toEqual(updated);

    const empty = await raw("PATCH", `/runs/crons/${cron.cron_id}`, {});
    expect([empty.status, empty.body.detail]).toEqual([400, "Request body cannot be empty"]);
    expect((await raw("PATCH", `/runs/crons/${randomUUID()}`, { enabled: true })).status).toBe(404);
    expect((await raw("PATCH", `/runs/crons/${cron.cron_id}`, { schedule: "nope" })).body.detail).toMatch(/^schedule: /);
  });

  it("deletes a cron", async () => {
    const cron = await t.client.crons.create("agent", { schedule: "* * * * *" });
    await t.client.crons.delete(cron.cron_id);
    expect((await raw("GET", `/runs/crons/${cron.cron_id}`)).status).toBe(404);
    const again = await raw("DELETE", `/runs/crons/${cron.cron_id}`);
    expect([again.status, again.body.detail]).toEqual([404, `Cron ${cron.cron_id} not found`]);
    expect((await raw("DELETE", "/runs/crons/not-a-uuid")).status).toBe(422);
  });

  it("fires a stateless cron every second: each run on a new thread, kept with on_run_completed keep, gone with delete", async () => {
    const kept = await t.client.crons.create("agent", { schedule: "* * * * * *", input: input("tick"), onRunCompleted: "keep", metadata: { suite: "keep" } });
    const dropped = await t.client.crons.create("agent", { schedule: "* * * * * *", input: input("tock"), metadata: { suite: "drop" } });
    const firings = async (cronId: string) => (await listFirings(t.server.db, cronId)).filter((f) => f.outcome === "queued");
    await until("two firings of each cron", async () => (await firings(kept.cron_id)).length >= 2 && (await firings(dropped.cron_id)).length >= 2);
    await t.client.crons.update(kept.cron_id, { enabled: false });
    await t.client.crons.update(dropped.cron_id, { enabled: false });

    const keptFirings = await firings(kept.cron_id);
    const threads = new Set<string>();
    for (const firing of keptFirings) {
      const [run] = await t.server.db.query<{ thread_id: string; metadata: unknown }>("SELECT thread_id, metadata FROM runs WHERE run_id = $1", [
        firing.run_id,
      ]);
      threads.add(run.thread_id);
      // The assistant's metadata, then the (new) thread's, then the cron's own.
      expect(run.metadata).toMatchObject({ created_by: "system", graph_id: "agent", assistant_id: agentId, suite: "keep" });
      const done = await t.client.runs.join(run.thread_id, firing.run_id!);
      expect(lastText(done)).toBe("You said: tick");
      expect((await t.client.threads.get(run.thread_id)).metadata).toMatchObject({ graph_id: "agent", assistant_id: agentId });
    }
    expect(threads.size).toBe(keptFirings.length);

    for (const firing of await firings(dropped.cron_id)) {
      await until("the run's thread to go", async () => {
        const rows = await t.server.db.query("SELECT 1 FROM runs WHERE run_id = $1", [firing.run_id]);
        return rows.length === 0;
      });
    }

    // Disabled: no more firings.
    const before = (await firings(kept.cron_id)).length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await firings(kept.cron_id)).length).toBe(before);
  });

  it("fires a thread cron on its thread, one run after another", async () => {
    const thread = await t.client.threads.create();
    const cron = await t.client.crons.createForThread(thread.thread_id, "agent", { schedule: "* * * * * *", input: input("again") });
    await until("two runs on the thread", async () => {
      const runs = await t.client.runs.list(thread.thread_id);
      return runs.filter((run) => run.status === "success").length >= 2;
    });
    await t.client.crons.delete(cron.cron_id);
    const state = await t.client.threads.getState(thread.thread_id);
    const texts = (state.values as { messages: Array<{ content: string }> }).messages.map((m) => m.content);
    expect(texts.slice(0, 4)).toEqual(["again", "You said: again", "again", "You said: again"]);
  });

  it("announces a cron's run exactly once, at its firing's commit", async () => {
    const heard: string[] = [];
    const unlisten = await t.server.db.listen(runsChannel(t.server.db.schema), (payload) => void heard.push(payload));
    try {
      const thread = await t.client.threads.create();
      const cron = await t.client.crons.createForThread(thread.thread_id, "agent", { schedule: onceIn(1), input: input("once") });
      const firing = await until("a queued firing", async () => (await listFirings(t.server.db, cron.cron_id)).find((f) => f.outcome === "queued"));
      await t.client.crons.delete(cron.cron_id);
      await t.client.runs.join(thread.thread_id, firing.run_id!);
      // The lifecycle's own announcement of the run would be a second one.
      expect(heard.map(readQueueAnnouncement).filter((a) => a.runId === firing.run_id)).toEqual([
        { runId: firing.run_id, delaySeconds: 0, threadId: thread.thread_id, claimed: false },
      ]);
    } finally {
      await unlisten();
    }
  });

  it("applies the thread cron's multitask strategy when the thread is busy: reject skips, interrupt takes over", async () => {
    const thread = await t.client.threads.create();
    const busy = await t.client.runs.create(thread.thread_id, "slow", { input: { steps: 10, delay_ms: 2_000 } });
    await until("the long run to start", async () => (await t.client.runs.get(thread.thread_id, busy.run_id)).status === "running");

    const rejecting = await t.client.crons.createForThread(thread.thread_id, "slow", {
      schedule: onceIn(1),
      multitaskStrategy: "reject",
      input: { steps: 1, delay_ms: 1 },
    });
    const rejected = await until("a rejected firing", async () => (await listFirings(t.server.db, rejecting.cron_id)).find((f) => f.outcome === "rejected"));
    expect(rejected.run_id).toBeNull();
    await t.client.crons.delete(rejecting.cron_id);
    expect((await t.client.runs.get(thread.thread_id, busy.run_id)).status).toBe("running");

    const interrupting = await t.client.crons.createForThread(thread.thread_id, "slow", {
      schedule: onceIn(1),
      multitaskStrategy: "interrupt",
      input: { steps: 1, delay_ms: 1 },
    });
    const queued = await until("a queued firing", async () => (await listFirings(t.server.db, interrupting.cron_id)).find((f) => f.outcome === "queued"));
    await t.client.crons.delete(interrupting.cron_id);
    await until("the long run to be interrupted", async () => (await t.client.runs.get(thread.thread_id, busy.run_id)).status === "interrupted");
    await t.client.runs.join(thread.thread_id, queued.run_id!);
    expect((await t.client.runs.get(thread.thread_id, queued.run_id!)).status).toBe("success");
  });

  it("stops firing at end_time", async () => {
    const cron = await t.client.crons.create("agent", { schedule: "* * * * * *", endTime: new Date(Date.now() + 2500).toISOString(), input: input("until") });
    await until("next_run_date to be cleared", async () => (await raw("GET", `/runs/crons/${cron.cron_id}`)).body.next_run_date === null, 10_000);
    const fired = await listFirings(t.server.db, cron.cron_id);
    expect(fired.length).toBeGreaterThanOrEqual(1);
    expect(fired.length).toBeLessThanOrEqual(3);
    for (const firing of fired) expect(firing.scheduled_for.getTime()).toBeLessThanOrEqual(Date.parse(cron.end_time!));
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect((await listFirings(t.server.db, cron.cron_id)).length).toBe(fired.length);
  });
});
