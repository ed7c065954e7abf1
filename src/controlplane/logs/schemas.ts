import { Type, type Static } from "@sinclair/typebox";
import { Nullable, StringEnum, Uuid } from "../deployments/wire.ts";
import { LOG_LEVELS } from "./lines.ts";

/** Wire shapes of build and deploy logs, as the vendor's log endpoints answer them. */

const LogEntry = Type.Object(
  {
    id: Type.String({ description: "Increases with every line; pass the last one seen as after_id to follow." }),
    timestamp: Type.String({ format: "date-time" }),
    level: StringEnum(LOG_LEVELS),
    message: Type.String(),
  },
  { title: "LogEntry" },
);

export const LogsPage = Type.Object(
  {
    logs: Type.Array(LogEntry),
    next_offset: Nullable(Type.Integer(), { description: "The offset of the next page; null when this was the last." }),
  },
  { title: "LogsPage" },
);
export type LogsPage = Static<typeof LogsPage>;

export const LogsQueryBody = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    order: Type.Optional(StringEnum(["asc", "desc"] as const, { default: "asc", description: "By time: oldest first (asc) or newest first (desc)." })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 })),
    level: Type.Optional(Nullable(StringEnum(LOG_LEVELS, { description: "Lines at this level or above." }))),
    query: Type.Optional(Nullable(Type.String({ maxLength: 1000, description: "Lines containing this text (case-insensitive)." }))),
    start_time: Type.Optional(Nullable(Type.String({ format: "date-time" }))),
    end_time: Type.Optional(Nullable(Type.String({ format: "date-time" }))),
  },
  { additionalProperties: false, title: "LogsQuery" },
);
export type LogsQueryBody = Static<typeof LogsQueryBody>;

export const ProjectParams = Type.Object({ deployment_id: Uuid() });
export const ProjectRevisionParams = Type.Object({ deployment_id: Uuid(), revision_id: Uuid() });

export const RevisionLogsQuery = Type.Object({
  type: Type.Optional(StringEnum(["build", "deploy"] as const, { default: "build" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 })),
  order: Type.Optional(StringEnum(["asc", "desc"] as const, { default: "asc" })),
  level: Type.Optional(StringEnum(LOG_LEVELS)),
  follow: Type.Optional(
    Type.Boolean({
      default: false,
      description: "Stream the log as server-sent events (`log` events, then `end`) while the revision builds or runs.",
    }),
  ),
});
export type RevisionLogsQuery = Static<typeof RevisionLogsQuery>;
