import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { queueAnnouncement, runsChannel } from "../../src/agentserver/runs/announcements.ts";
import { StreamBroker } from "../../src/agentserver/stream/broker.ts";
import { followThreadRuns } from "../../src/agentserver/stream/thread-follow.ts";
import { threadRunFeed } from "../../src/agentserver/runs/run-feed.ts";
import type { Database } from "../../src/storage/database.ts";
import { openDatabase } from "../../src/storage/open.ts";
import { freshBackend } from "../support/backends.ts";

describe("thread stream following runs of other processes, on PostgreSQL", () => {
  const opened: Database[] = [];
  afterEach(async () => {
    for (const db of opened.splice(0)) await db.close();
  });

  it("lets go of everything it set up when it cannot read the thread's runs", async () => {
    const target = freshBackend("postgres", "follow");
    const db = await openDatabase({ databaseUrl: target.databaseUrl, schema: target.schema, component: "agent", poolSize: 2 });
    opened.push(db);
    const broker = new StreamBroker();
    // Not a uuid: the query of the thread's active runs fails after the listener is set up.
    const thread = "not-a-uuid";
    await expect(followThreadRuns(threadRunFeed(db), broker, thread)).rejects.toThrow(/uuid/);

    // A run announced on that thread afterwards must not be followed by the failed stream.
    const runId = randomUUID();
    const marker = randomUUID();
    const heard = new Promise<void>((resolve) => void db.listen(runsChannel(db.schema), (payload) => payload.startsWith(marker) && resolve()));
    await db.notify(runsChannel(db.schema), queueAnnouncement(runId, 0, thread));
    await db.notify(runsChannel(db.schema), queueAnnouncement(marker, 0, thread));
    await heard;
    expect(broker.stateOf(runId)).toBeUndefined();
  });
});
