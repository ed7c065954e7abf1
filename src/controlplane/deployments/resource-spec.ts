import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Nullable } from "./wire.ts";

/**
 * The vendor's ResourceSpec: replica counts, CPU and memory of the server, its queue
 * workers and its database, plus Kubernetes pod extras. Slipway's local runtime reads
 * min_scale and the memory fields; the rest is stored and shown for a Kubernetes runtime,
 * which is planned. Fields the vendor marks "do not use" are accepted so that its clients'
 * bodies validate.
 */

const int = () => Nullable(Type.Integer({ minimum: 0 }));
const cores = (maximum: number) => Nullable(Type.Number({ minimum: 0.1, maximum }));
const num = () => Nullable(Type.Number({ minimum: 0 }));
const stringMap = () => Nullable(Type.Record(Type.String(), Type.String()));
/** Kubernetes objects (volumes, containers, ...) are stored as given. */
const k8sObjects = () => Nullable(Type.Array(Type.Object({}, { additionalProperties: true })));

const fields: Record<string, TSchema> = {
  min_scale: int(),
  max_scale: int(),
  cpu: cores(8),
  cpu_limit: cores(16),
  memory_mb: int(),
  memory_limit_mb: int(),
  queue_min_scale: int(),
  queue_max_scale: int(),
  queue_cpu: cores(8),
  queue_cpu_limit: cores(16),
  queue_memory_mb: int(),
  queue_memory_limit_mb: int(),
  orchestrator_cpu: num(),
  orchestrator_cpu_limit: num(),
  orchestrator_memory_mb: int(),
  orchestrator_memory_limit_mb: int(),
  orchestrator_min_scale: int(),
  orchestrator_max_scale: int(),
  executor_cpu: num(),
  executor_cpu_limit: num(),
  executor_memory_mb: int(),
  executor_memory_limit_mb: int(),
  redis_cpu: cores(8),
  redis_cpu_limit: cores(16),
  redis_memory_mb: int(),
  redis_memory_limit_mb: int(),
  labels: stringMap(),
  annotations: stringMap(),
  service_account_name: Nullable(Type.String()),
  image_pull_secrets: Nullable(Type.Array(Type.Object({ name: Type.String() }, { additionalProperties: false }))),
  volumes: k8sObjects(),
  volume_mounts: k8sObjects(),
  init_containers: k8sObjects(),
  sidecars: k8sObjects(),
  db_cpu: num(),
  db_cpu_limit: num(),
  db_memory_mb: int(),
  db_memory_limit_mb: int(),
  db_storage_gi: int(),
  db_max_connections: int(),
};

export const ResourceSpec = Type.Object(Object.fromEntries(Object.entries(fields).map(([key, schema]) => [key, Type.Optional(schema)])), {
  additionalProperties: false,
  title: "ResourceSpec",
  description: "Resource specification for the deployment. Setting it in a PATCH creates a new revision and replaces the previous resource_spec.",
});

export type ResourceSpec = Static<typeof ResourceSpec>;
