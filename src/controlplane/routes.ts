import { registerAuthServiceRoutes } from "./authservice/routes.ts";
import { registerConsoleRoutes } from "./console/routes.ts";
import type { RegisterRoutes } from "./context.ts";
import { registerDeploymentRoutes } from "./deployments/routes.ts";
import { registerIntegrationRoutes } from "./integrations/routes.ts";
import { registerListenerRoutes } from "./listeners/routes.ts";
import { registerLogRoutes } from "./logs/routes.ts";
import { registerMetricsRoutes } from "./metrics/routes.ts";
import { registerRevisionRoutes } from "./revisions/routes.ts";
import { registerTenancyRoutes } from "./tenancy/routes.ts";
import { registerUploadRoutes } from "./uploads/routes.ts";
import { registerWebhookRoutes } from "./webhooks/routes.ts";

/**
 * Every resource folder of the control plane, mounted by app.ts at the root (`/v1/...`,
 * `/v2/...`); the self-hosted prefix `/api-host` is an alias of the same routes. Each module
 * registers its routes without a prefix; every route is behind the auth hook, so
 * handlers read `requireTenant(request)` (routes with `config: { public: true }` skip it).
 *
 * To add a group: export its `XService` class from `<folder>/service.ts` and build it in
 * services.ts, then export `registerXRoutes: RegisterRoutes` from `<folder>/routes.ts`
 * (taking its service: `(app, { xs }) => ...`) and append it here.
 */
export const routeModules: RegisterRoutes[] = [
  registerIntegrationRoutes,
  registerAuthServiceRoutes,
  registerDeploymentRoutes,
  registerRevisionRoutes,
  registerListenerRoutes,
  registerUploadRoutes,
  registerLogRoutes,
  registerWebhookRoutes,
  registerTenancyRoutes,
  registerConsoleRoutes,
  registerMetricsRoutes,
];
