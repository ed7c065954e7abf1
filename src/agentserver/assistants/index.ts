export { AssistantService, systemAssistantId } from "./service.ts";
export { registerAssistantRoutes } from "./routes.ts";
export { StaticGraphSchemas, graphSources } from "./graph-schemas/static-schemas.ts";
