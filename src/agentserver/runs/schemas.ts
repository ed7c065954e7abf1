import { Type, type Static } from "@sinclair/typebox";
import { Duration, PageLimit, PageOffset } from "../../http/bounds.ts";
import { QueryBoolean } from "../../http/query.ts";

/** Request and response schemas of the runs group, field names as the vendor's. */

export const STREAM_MODES = ["values", "messages", "messages-tuple", "tasks", "checkpoints", "updates", "events", "debug", "custom"] as const;
export type StreamMode = (typeof STREAM_MODES)[number];
export const RUN_STATUSES = ["pending", "running", "error", "success", "timeout", "interrupted"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const MULTITASK_STRATEGIES = ["reject", "rollback", "interrupt", "enqueue"] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** A closed set of strings: validated as an enum, typed as the union, shown as `enum` in OpenAPI. */
const literalUnion = <const T extends readonly string[]>(values: T) => Type.Unsafe<T[number]>({ type: "string", enum: [...values] });

const StreamModeSchema = literalUnion(STREAM_MODES);
const NodeList = Type.Union([Type.Literal("*"), Type.Array(Type.String())]);

export const CheckpointConfigSchema = Type.Object(
  {
    thread_id: Type.Optional(Type.String()),
    checkpoint_ns: Type.Optional(Type.String()),
    checkpoint_id: Type.Optional(Type.String()),
    checkpoint_map: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  },
  { additionalProperties: false },
);

const SendSchema = Type.Object({ node: Type.String(), input: Type.Unknown() }, { additionalProperties: false });

export const CommandSchema = Type.Object(
  {
    update: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown()), Type.Null()])),
    resume: Type.Optional(Type.Unknown()),
    goto: Type.Optional(Type.Union([SendSchema, Type.Array(SendSchema), Type.String(), Type.Array(Type.String()), Type.Null()])),
  },
  { additionalProperties: false },
);

const RunConfigSchema = Type.Object(
  {
    tags: Type.Optional(Type.Array(Type.String())),
    recursion_limit: Type.Optional(Type.Integer({ minimum: 1 })),
    configurable: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  // Other RunnableConfig keys (run_name, max_concurrency, ...) pass through to the graph.
  { additionalProperties: true },
);

/** Fields shared by every way of creating a run. */
const commonRunFields = {
  assistant_id: Type.String({ minLength: 1 }),
  input: Type.Optional(Type.Unknown()),
  command: Type.Optional(Type.Union([CommandSchema, Type.Null()])),
  metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  config: Type.Optional(Type.Union([RunConfigSchema, Type.Null()])),
  context: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  webhook: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 65536 }), Type.Null()])),
  interrupt_before: Type.Optional(Type.Union([NodeList, Type.Null()])),
  interrupt_after: Type.Optional(Type.Union([NodeList, Type.Null()])),
  stream_mode: Type.Optional(Type.Union([StreamModeSchema, Type.Array(StreamModeSchema), Type.Null()])),
  stream_subgraphs: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  stream_resumable: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  feedback_keys: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  on_disconnect: Type.Optional(Type.Union([literalUnion(["cancel", "continue"] as const), Type.Null()])),
  after_seconds: Type.Optional(Type.Union([Duration("seconds", { minimum: 0 }), Type.Null()])),
  checkpoint_during: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  durability: Type.Optional(Type.Union([literalUnion(["sync", "async", "exit"] as const), Type.Null()])),
  langsmith_tracer: Type.Optional(Type.Unknown()),
};

export const RunCreateStatefulSchema = Type.Object(
  {
    ...commonRunFields,
    checkpoint: Type.Optional(Type.Union([CheckpointConfigSchema, Type.Null()])),
    checkpoint_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    multitask_strategy: Type.Optional(Type.Union([literalUnion(MULTITASK_STRATEGIES), Type.Null()])),
    if_not_exists: Type.Optional(Type.Union([literalUnion(["create", "reject"] as const), Type.Null()])),
  },
  { additionalProperties: false },
);
export type RunCreateStateful = Static<typeof RunCreateStatefulSchema>;

export const RunCreateStatelessSchema = Type.Object(
  {
    ...commonRunFields,
    on_completion: Type.Optional(Type.Union([literalUnion(["delete", "keep"] as const), Type.Null()])),
    // RemoteGraph sends "create" on every run, as the vendor's server accepts: a
    // stateless run has no thread that could be missing, so either value holds as is.
    if_not_exists: Type.Optional(
      Type.Union([literalUnion(["create", "reject"] as const), Type.Null()], {
        description: "Accepted for RemoteGraph and the vendor's clients; a stateless run has no thread, so it changes nothing.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type RunCreateStateless = Static<typeof RunCreateStatelessSchema>;

/** Either creation body, as the service sees it. */
export type RunCreate = RunCreateStateful & Partial<RunCreateStateless>;

export const RunSchema = Type.Object({
  run_id: Type.String({ format: "uuid" }),
  thread_id: Type.String({ format: "uuid" }),
  assistant_id: Type.String({ format: "uuid" }),
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
  status: literalUnion(RUN_STATUSES),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  kwargs: Type.Record(Type.String(), Type.Unknown()),
  multitask_strategy: literalUnion(MULTITASK_STRATEGIES),
});
export type Run = Static<typeof RunSchema>;

export { ErrorResponse as ErrorResponseSchema } from "../route-helpers.ts";

export const ThreadIdParams = Type.Object({ thread_id: Type.String({ format: "uuid" }) });
export const RunIdParams = Type.Object({
  thread_id: Type.String({ format: "uuid" }),
  run_id: Type.String({ format: "uuid" }),
});

export const RunsCancelSchema = Type.Object(
  {
    status: Type.Optional(literalUnion(["pending", "running", "all"] as const)),
    thread_id: Type.Optional(Type.String({ format: "uuid" })),
    run_ids: Type.Optional(Type.Array(Type.String({ format: "uuid" }))),
  },
  { additionalProperties: false },
);

export const ListRunsQuery = Type.Object({
  limit: Type.Optional(PageLimit({ maximum: 1000, default: 10 })),
  offset: Type.Optional(PageOffset()),
  status: Type.Optional(literalUnion(RUN_STATUSES)),
  select: Type.Optional(Type.Array(Type.String())),
});

export const CancelQuery = Type.Object({
  wait: Type.Optional(QueryBoolean({ default: false })),
  action: Type.Optional(literalUnion(["interrupt", "rollback"] as const)),
});

export const JoinStreamQuery = Type.Object({
  cancel_on_disconnect: Type.Optional(QueryBoolean({ default: false })),
  // "": the official Python SDK's join_stream sends `stream_mode=` when none is asked for; as on the vendor's server, every mode.
  stream_mode: Type.Optional(Type.Union([StreamModeSchema, Type.Array(StreamModeSchema), Type.Literal("")])),
});

/** Any JSON value: the final state values a wait/join returns. */
export const AnyValue = Type.Unknown();
