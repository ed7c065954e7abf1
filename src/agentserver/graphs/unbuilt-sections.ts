import { SectionError } from "./config-sections.ts";

/**
 * Sections of langgraph.json this server cannot honour yet, refused by name: a custom
 * auth handler silently left out would leave open a server its author meant to protect,
 * and a TTL left out would keep data meant to go.
 */
export function refuseUnbuiltSections(raw: Record<string, unknown>): void {
  const auth = raw.auth as Record<string, unknown> | null | undefined;
  if (auth && typeof auth === "object" && auth.path != null) {
    throw new SectionError("auth: custom authentication handlers are not supported yet; protect the server with --api-key");
  }
  for (const [section, keys] of [["store", ["index", "ttl"]], ["checkpointer", ["ttl"]]] as const) {
    const value = raw[section] as Record<string, unknown> | null | undefined;
    for (const key of keys) if (value && typeof value === "object" && value[key] != null) throw new SectionError(`${section}.${key}: not supported yet`);
  }
}
