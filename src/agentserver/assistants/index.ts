export { AssistantService, NAMESPACE_GRAPH, systemAssistantId } from "./service.ts";
export type { AssistantServiceOptions, SearchResult } from "./service.ts";
export { registerAssistantRoutes } from "./routes.ts";
export type { Assistant } from "./schemas.ts";
export { graphSchemas, drawGraph, listSubgraphs } from "./graph-info.ts";
export type { GraphSchemas, Xray } from "./graph-info.ts";
export { StaticGraphSchemas, graphSources, schemaTimeoutMs } from "./graph-schemas/static-schemas.ts";
