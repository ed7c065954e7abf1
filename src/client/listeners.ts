import type { Static } from "@sinclair/typebox";
import type { Listener, ListenerCreateRequest, ListenerPatchRequest, ListenersList } from "../controlplane/listeners/schemas.ts";
import type { Transport } from "./transport.ts";

/** /v2/listeners (organizations on the self-hosted enterprise plan). */
export function listenersApi(http: Transport) {
  const at = (id: string) => `/v2/listeners/${encodeURIComponent(id)}`;
  return {
    list: (query: { limit?: number; offset?: number } = {}) => http.json<Static<typeof ListenersList>>({ method: "GET", path: "/v2/listeners", query }),
    get: (id: string) => http.json<Listener>({ method: "GET", path: at(id) }),
    /** Not retried: compute_id is unique, so a repeat after a lost answer is a 409. */
    create: (body: ListenerCreateRequest) => http.json<Listener>({ method: "POST", path: "/v2/listeners", body }),
    /** Safe to repeat: it sets fields to the values given and makes nothing. */
    update: (id: string, body: ListenerPatchRequest) => http.json<Listener>({ method: "PATCH", path: at(id), body, idempotent: true }),
    delete: (id: string) => http.json<void>({ method: "DELETE", path: at(id) }),
  };
}
