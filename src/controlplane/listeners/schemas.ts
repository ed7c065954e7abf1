import { Type, type Static } from "@sinclair/typebox";
import { DateTime, Nullable, PageOf, PageQuery, Uuid } from "../deployments/wire.ts";

/** A Kubernetes namespace name (RFC 1123 label). */
const NAMESPACE = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

export const ListenerComputeConfig = Type.Object(
  {
    k8s_namespaces: Type.Optional(
      Nullable(Type.Array(Type.String({ pattern: NAMESPACE, maxLength: 63 }), { maxItems: 100 }), {
        description: "Kubernetes namespaces the listener serves (compute type k8s).",
      }),
    ),
  },
  { additionalProperties: false, title: "ListenerComputeConfig" },
);
export type ListenerComputeConfig = Static<typeof ListenerComputeConfig>;

const computeType = Type.Literal("k8s", { description: "Cannot change once the listener is created." });
const computeId = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: "^\\S(.*\\S)?$",
  description: "User-assigned id of the compute infrastructure (for k8s, the cluster name); unique in the workspace. Cannot change.",
});
const version = Nullable(Type.String({ maxLength: 128 }), { description: "Version of the listener." });

export const ListenerCreateRequest = Type.Object(
  { version: Type.Optional(version), compute_type: computeType, compute_id: computeId, compute_config: ListenerComputeConfig },
  { additionalProperties: false, title: "ListenerCreateRequest" },
);
export type ListenerCreateRequest = Static<typeof ListenerCreateRequest>;

export const ListenerPatchRequest = Type.Object(
  {
    version: Type.Optional(version),
    compute_config: Type.Optional(Nullable(ListenerComputeConfig)),
    // Accepted so that a client sending the record back works: a different compute_id is refused
    // with 400; compute_type has a single value, so any other is a 422.
    compute_type: Type.Optional(computeType),
    compute_id: Type.Optional(Type.String()),
  },
  { additionalProperties: false, title: "ListenerPatchRequest" },
);
export type ListenerPatchRequest = Static<typeof ListenerPatchRequest>;

export const Listener = Type.Object(
  {
    id: Uuid(),
    version,
    compute_type: computeType,
    compute_id: Type.String(),
    compute_config: ListenerComputeConfig,
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: "Listener" },
);
export type Listener = Static<typeof Listener>;

export const ListenersList = PageOf(Listener, "ListenersList");
export const ListenerListQuery = Type.Object(PageQuery);
export const ListenerIdParams = Type.Object({ listener_id: Uuid({ title: "Listener ID" }) });
