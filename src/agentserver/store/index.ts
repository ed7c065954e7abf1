export { registerStoreRoutes } from "./routes.ts";
