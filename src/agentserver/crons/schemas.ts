import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { PageLimit, PageOffset } from "../../http/bounds.ts";
import { MULTITASK_STRATEGIES, STREAM_MODES } from "../runs/schemas.ts";

/**
 * Wire records of the crons group, named and shaped as the vendor's (CronCreate,
 * ThreadCronCreate, CronPatch, CronSearch, CronCountRequest, Cron), plus the two run
 * fields the official SDK sends with every cron (`multitask_strategy`,
 * `checkpoint_during`). Unknown fields are refused (422 naming them). `null` is
 * accepted for "not given", as the Python SDK may send it.
 */
const Json = (description: string) => Type.Object({}, { additionalProperties: true, description });
const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([Type.Null(), schema]));
const literals = <const T extends readonly string[]>(values: T) => Type.Unsafe<T[number]>({ type: "string", enum: [...values] });

const ON_RUN_COMPLETED = ["delete", "keep"] as const;
export type OnRunCompleted = (typeof ON_RUN_COMPLETED)[number];
const CRON_SORT_FIELDS = ["cron_id", "assistant_id", "thread_id", "next_run_date", "end_time", "created_at", "updated_at"] as const;
export type CronSortField = (typeof CRON_SORT_FIELDS)[number];
const CRON_SELECT_FIELDS = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "on_run_completed",
  "end_time",
  "schedule",
  "timezone",
  "created_at",
  "updated_at",
  "user_id",
  "payload",
  "next_run_date",
  "metadata",
  "enabled",
] as const;
export type CronSelectField = (typeof CRON_SELECT_FIELDS)[number];

const StreamMode = literals(STREAM_MODES);
const NodeList = Type.Union([Type.Literal("*"), Type.Array(Type.String())]);
const RunConfig = Type.Object(
  {
    tags: Type.Optional(Type.Array(Type.String())),
    recursion_limit: Type.Optional(Type.Integer({ minimum: 1 })),
    configurable: Type.Optional(Json("Values for the graph's configurable fields.")),
  },
  // Other RunnableConfig keys (run_name, max_concurrency, ...) pass through to the graph.
  { additionalProperties: true },
);

/** What each firing's run is made of: the run fields a cron carries. */
const runFields = {
  input: nullable(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Record(Type.String(), Type.Unknown()))])),
  metadata: nullable(Json("Metadata of the cron, given to each of its runs.")),
  config: nullable(RunConfig),
  context: nullable(Json("Static context added to the assistant.")),
  webhook: nullable(Type.String({ minLength: 1, maxLength: 65536 })),
  interrupt_before: nullable(NodeList),
  interrupt_after: nullable(NodeList),
  stream_mode: nullable(Type.Union([StreamMode, Type.Array(StreamMode)])),
  stream_subgraphs: nullable(Type.Boolean()),
  stream_resumable: nullable(Type.Boolean()),
  durability: nullable(literals(["sync", "async", "exit"] as const)),
  checkpoint_during: nullable(Type.Boolean()),
};

/** When it fires. */
const scheduleFields = {
  schedule: Type.String({ minLength: 1, maxLength: 1000, description: "Cron expression: 5 fields, or 6 with seconds last." }),
  timezone: nullable(Type.String({ minLength: 1, maxLength: 100, description: "IANA time zone of the schedule; UTC when absent." })),
  end_time: nullable(Type.String({ format: "date-time", description: "No firing after this time." })),
  enabled: nullable(Type.Boolean()),
};

export const CronCreateSchema = Type.Object(
  {
    assistant_id: Type.String({ minLength: 1, description: "An assistant id, or a graph id (its system assistant)." }),
    ...scheduleFields,
    ...runFields,
    on_run_completed: nullable(literals(ON_RUN_COMPLETED)),
    multitask_strategy: nullable(literals(MULTITASK_STRATEGIES)),
  },
  { additionalProperties: false },
);
export type CronCreate = Static<typeof CronCreateSchema>;

export const ThreadCronCreateSchema = CronCreateSchema;

export const CronPatchSchema = Type.Object(
  {
    schedule: Type.Optional(scheduleFields.schedule),
    timezone: scheduleFields.timezone,
    end_time: scheduleFields.end_time,
    enabled: scheduleFields.enabled,
    on_run_completed: nullable(literals(ON_RUN_COMPLETED)),
    ...runFields,
  },
  { additionalProperties: false },
);
export type CronPatch = Static<typeof CronPatchSchema>;

const filterFields = {
  assistant_id: nullable(Type.String({ minLength: 1, description: "An assistant id, or a graph id." })),
  thread_id: nullable(Type.String({ format: "uuid" })),
  metadata: nullable(Json("Crons whose metadata holds each of these key-value pairs.")),
};

export const CronSearchSchema = Type.Object(
  {
    ...filterFields,
    enabled: nullable(Type.Boolean()),
    limit: Type.Optional(PageLimit({ maximum: 1000, default: 10 })),
    offset: Type.Optional(PageOffset()),
    sort_by: nullable(literals(CRON_SORT_FIELDS)),
    sort_order: nullable(literals(["asc", "desc"] as const)),
    select: nullable(Type.Array(literals(CRON_SELECT_FIELDS))),
  },
  { additionalProperties: false },
);
export type CronSearch = Static<typeof CronSearchSchema>;

export const CronCountSchema = Type.Object(filterFields, { additionalProperties: false });
export type CronCount = Static<typeof CronCountSchema>;

export const CronSchema = Type.Object({
  cron_id: Type.String({ format: "uuid" }),
  assistant_id: Type.String({ format: "uuid" }),
  thread_id: Type.Union([Type.Null(), Type.String({ format: "uuid" })]),
  on_run_completed: Type.Union([Type.Null(), literals(ON_RUN_COMPLETED)]),
  end_time: Type.Union([Type.Null(), Type.String({ format: "date-time" })]),
  schedule: Type.String(),
  timezone: Type.Union([Type.Null(), Type.String()]),
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
  user_id: Type.Union([Type.Null(), Type.String()]),
  payload: Json("The run fields each firing uses, as given."),
  next_run_date: Type.Union([Type.Null(), Type.String({ format: "date-time" })]),
  metadata: Json("The cron's metadata."),
  enabled: Type.Boolean(),
});
export type Cron = Static<typeof CronSchema>;

export const CronIdParams = Type.Object({ cron_id: Type.String({ format: "uuid" }) });
export const ThreadIdParams = Type.Object({ thread_id: Type.String({ format: "uuid" }) });
