import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Duration, PageLimit, PageOffset } from "../../http/bounds.ts";
import { QueryBoolean } from "../../http/query.ts";

/** Request and response schemas of the threads group, field names as the vendor's. */

const THREAD_STATUSES = ["idle", "busy", "interrupted", "error"] as const;
export type ThreadStatus = (typeof THREAD_STATUSES)[number];
const THREAD_SELECT_FIELDS = ["thread_id", "created_at", "updated_at", "state_updated_at", "metadata", "config", "status", "values", "interrupts"] as const;
export type ThreadSelectField = (typeof THREAD_SELECT_FIELDS)[number];
const SORT_FIELDS = ["thread_id", "status", "created_at", "updated_at", "state_updated_at"] as const;
const STATE_FIELDS = ["values", "next", "tasks", "checkpoint", "metadata", "created_at", "parent_checkpoint", "interrupts"] as const;

const literalUnion = <T extends readonly string[]>(values: T) => Type.Unsafe<T[number]>(Type.Union(values.map((v) => Type.Literal(v))));
/** Optional and nullable: the Python SDK sends null for fields it was not given. */
const Maybe = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const JsonObject = Type.Record(Type.String(), Type.Unknown());
const Uuid = Type.String({ format: "uuid" });

export { ErrorResponse as ErrorResponseSchema } from "../route-helpers.ts";
export const ThreadIdParams = Type.Object({ thread_id: Uuid });
export const CheckpointParams = Type.Object({ thread_id: Uuid, checkpoint_id: Uuid });

const CheckpointConfigSchema = Type.Object(
  {
    thread_id: Maybe(Type.String()),
    checkpoint_ns: Maybe(Type.String()),
    checkpoint_id: Maybe(Type.String()),
    checkpoint_map: Maybe(JsonObject),
  },
  { additionalProperties: false },
);
export type CheckpointConfig = Static<typeof CheckpointConfigSchema>;

const TtlSchema = Type.Object(
  {
    strategy: Type.Optional(literalUnion(["delete", "keep_latest"] as const)),
    ttl: Duration("minutes", { exclusiveMinimum: 0, description: "Minutes from now (and from each later run) until the thread is swept." }),
  },
  { additionalProperties: false },
);
export type TtlInput = Static<typeof TtlSchema>;

const CommandSchema = Type.Object(
  {
    update: Maybe(Type.Union([JsonObject, Type.Array(Type.Unknown())])),
    goto: Maybe(Type.Union([Type.String(), Type.Array(Type.String())])),
    resume: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const SuperstepUpdateSchema = Type.Object(
  {
    values: Maybe(Type.Union([JsonObject, Type.Array(Type.Unknown())])),
    command: Maybe(CommandSchema),
    as_node: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

export const ThreadCreateSchema = Type.Object(
  {
    thread_id: Maybe(Uuid),
    metadata: Maybe(JsonObject),
    if_exists: Maybe(literalUnion(["raise", "do_nothing"] as const)),
    ttl: Maybe(TtlSchema),
    supersteps: Maybe(Type.Array(Type.Object({ updates: Type.Array(SuperstepUpdateSchema, { minItems: 1 }) }, { additionalProperties: false }))),
  },
  { additionalProperties: false },
);
export type ThreadCreate = Static<typeof ThreadCreateSchema>;
export type SuperstepInput = NonNullable<ThreadCreate["supersteps"]>[number];

export const ThreadPatchSchema = Type.Object({ metadata: Maybe(JsonObject), ttl: Maybe(TtlSchema) }, { additionalProperties: false });
export type ThreadPatch = Static<typeof ThreadPatchSchema>;

const filterFields = {
  metadata: Maybe(JsonObject),
  values: Maybe(JsonObject),
  status: Maybe(literalUnion(THREAD_STATUSES)),
};

export const ThreadSearchSchema = Type.Object(
  {
    ...filterFields,
    ids: Maybe(Type.Array(Uuid)),
    limit: Type.Optional(PageLimit({ maximum: 1000, default: 10 })),
    offset: Type.Optional(PageOffset()),
    sort_by: Maybe(literalUnion(SORT_FIELDS)),
    sort_order: Maybe(literalUnion(["asc", "desc"] as const)),
    select: Maybe(Type.Array(literalUnion(THREAD_SELECT_FIELDS), { minItems: 1 })),
    extract: Maybe(Type.Record(Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$" }), Type.String({ minLength: 1 }), { maxProperties: 10 })),
  },
  { additionalProperties: false },
);
export type ThreadSearch = Static<typeof ThreadSearchSchema>;

export const ThreadCountSchema = Type.Object(filterFields, { additionalProperties: false });
export type ThreadCount = Static<typeof ThreadCountSchema>;

export const ThreadPruneSchema = Type.Object(
  { thread_ids: Type.Array(Uuid), strategy: Type.Optional(literalUnion(["delete", "keep_latest"] as const)) },
  { additionalProperties: false },
);
export const ThreadPruneResponseSchema = Type.Object({ pruned_count: Type.Integer() });

export const ThreadSchema = Type.Object({
  thread_id: Type.Optional(Type.String({ format: "uuid" })),
  created_at: Type.Optional(Type.String({ format: "date-time" })),
  updated_at: Type.Optional(Type.String({ format: "date-time" })),
  state_updated_at: Type.Optional(Type.String({ format: "date-time" })),
  metadata: Type.Optional(JsonObject),
  config: Type.Optional(JsonObject),
  status: Type.Optional(literalUnion(THREAD_STATUSES)),
  values: Type.Optional(Type.Unknown()),
  interrupts: Type.Optional(JsonObject),
  error: Type.Optional(Type.Unknown()),
  ttl: Type.Optional(
    Type.Object({
      strategy: literalUnion(["delete", "keep_latest"] as const),
      ttl_minutes: Type.Number(),
      expires_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
    }),
  ),
  extracted: Type.Optional(JsonObject),
});
export type Thread = Static<typeof ThreadSchema>;

export const GetThreadQuery = Type.Object({ include: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])) }, { additionalProperties: false });

// --- thread state ---------------------------------------------------------------

const StateSelect = Type.Array(Type.String({ pattern: `^(${STATE_FIELDS.join("|")}|values\\..+)$` }), { minItems: 1 });

export const StateQuery = Type.Object(
  { subgraphs: Type.Optional(QueryBoolean({ default: false })), select: Type.Optional(StateSelect) },
  { additionalProperties: false },
);

export const StateAtCheckpointBody = Type.Object(
  { checkpoint: CheckpointConfigSchema, subgraphs: Maybe(Type.Boolean()), select: Maybe(StateSelect) },
  { additionalProperties: false },
);

export const StateUpdateSchema = Type.Object(
  {
    values: Maybe(Type.Union([JsonObject, Type.Array(Type.Unknown())])),
    as_node: Maybe(Type.String({ minLength: 1 })),
    checkpoint: Maybe(CheckpointConfigSchema),
    checkpoint_id: Maybe(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);
export type StateUpdate = Static<typeof StateUpdateSchema>;

export const StatePatchSchema = Type.Object(
  { metadata: JsonObject, checkpoint: Maybe(CheckpointConfigSchema), checkpoint_id: Maybe(Type.String({ minLength: 1 })) },
  { additionalProperties: false },
);
export type StatePatch = Static<typeof StatePatchSchema>;

export const HistoryQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 10 })), before: Type.Optional(Type.String({ minLength: 1 })) },
  { additionalProperties: false },
);

export const HistoryBody = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 10 })),
    // A checkpoint id, a CheckpointConfig, or (the JS SDK's type) a RunnableConfig around one.
    before: Maybe(
      Type.Union([
        Type.String({ minLength: 1 }),
        CheckpointConfigSchema,
        Type.Object({ configurable: CheckpointConfigSchema }, { additionalProperties: false }),
      ]),
    ),
    metadata: Maybe(JsonObject),
    checkpoint: Maybe(CheckpointConfigSchema),
    select: Maybe(StateSelect),
  },
  { additionalProperties: false },
);

const WireCheckpoint = Type.Object({
  thread_id: Type.Union([Type.String(), Type.Null()]),
  checkpoint_ns: Type.String(),
  checkpoint_id: Type.Union([Type.String(), Type.Null()]),
  checkpoint_map: Type.Union([JsonObject, Type.Null()]),
});

/** A state as the vendor returns it; tasks[].state nests another ThreadState (kept open here). */
export const ThreadStateSchema = Type.Object({
  values: Type.Optional(Type.Unknown()),
  next: Type.Optional(Type.Array(Type.String())),
  tasks: Type.Optional(Type.Array(Type.Unknown())),
  checkpoint: Type.Optional(Type.Union([WireCheckpoint, Type.Null()])),
  metadata: Type.Optional(Type.Union([JsonObject, Type.Null()])),
  created_at: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  parent_checkpoint: Type.Optional(Type.Union([WireCheckpoint, Type.Null()])),
  interrupts: Type.Optional(Type.Array(Type.Unknown())),
});
export type ThreadStateWire = Static<typeof ThreadStateSchema>;
export type WireCheckpointConfig = Static<typeof WireCheckpoint>;

export const StateUpdateResponseSchema = Type.Object({ checkpoint: WireCheckpoint });

const Usage = Type.Object({ count: Type.Integer(), bytes: Type.Integer() });
export const ThreadStorageSchema = Type.Object({
  thread_id: Type.String({ format: "uuid" }),
  total_bytes: Type.Integer(),
  checkpoints: Usage,
  channel_values: Type.Object({
    count: Type.Integer(),
    bytes: Type.Integer(),
    by_channel: Type.Record(Type.String(), Type.Object({ versions: Type.Integer(), bytes: Type.Integer() })),
  }),
  pending_writes: Usage,
});
export type ThreadStorage = Static<typeof ThreadStorageSchema>;
