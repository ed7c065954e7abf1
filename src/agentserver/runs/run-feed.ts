import type { Database } from "../../storage/database.ts";
import type { ThreadRunFeed } from "../stream/thread-follow.ts";
import { readQueueAnnouncement, runsChannel } from "./announcements.ts";
import { activeRunIdsOfThread } from "./repository.ts";

/** What a thread stream needs to know of the thread's runs in every process (thread-follow.ts). */
export function threadRunFeed(db: Database): ThreadRunFeed {
  return {
    shared: db.shared,
    activeRunIds: (threadId) => activeRunIdsOfThread(db, threadId),
    onQueued: (listener) =>
      db.listen(runsChannel(db.schema), (payload) => {
        const { runId, threadId } = readQueueAnnouncement(payload);
        if (runId && threadId) listener(runId, threadId);
      }),
  };
}
