import { GIT_HOSTS_SETTING } from "../config/controlplane.ts";
import { OAuthFlowService } from "./authservice/flow-service.ts";
import { OAuthProviderService } from "./authservice/service.ts";
import { TokenKeeper } from "./authservice/token-keeper.ts";
import { OAuthTokenService } from "./authservice/token-service.ts";
import type { ControlPlaneDeps } from "./context.ts";
import { DeploymentService } from "./deployments/service.ts";
import { IntegrationService } from "./integrations/service.ts";
import { ListenerService } from "./listeners/service.ts";
import { LogService } from "./logs/service.ts";
import { RevisionService } from "./revisions/service.ts";
import { TenancyService } from "./tenancy/service.ts";
import { UploadService } from "./uploads/service.ts";
import { WebhookService } from "./webhooks/service.ts";
import { MetricsService } from "./metrics/service.ts";

/** The services behind the control plane's routes, one of each per app. */
export interface ControlPlaneServices {
  deployments: DeploymentService;
  revisions: RevisionService;
  listeners: ListenerService;
  uploads: UploadService;
  logs: LogService;
  webhooks: WebhookService;
  integrations: IntegrationService;
  oauthProviders: OAuthProviderService;
  oauthFlows: OAuthFlowService;
  oauthTokens: OAuthTokenService;
  tenancy: TenancyService;
  metrics: MetricsService;
}

/**
 * Builds every service once over the same deps; app.ts hands the result to each route
 * module, which takes the services it serves.
 *
 * @example
 * const services = buildServices(deps);
 * await services.deployments.get(workspaceId, deploymentId);
 */
export function buildServices(deps: ControlPlaneDeps): ControlPlaneServices {
  const revisions = new RevisionService(deps);
  // OAuth providers are reached under the same operator allowance as git hosts (docs/decisions/0043).
  const outbound = deps.gitHosts ?? { allowHosts: [], allowSetting: GIT_HOSTS_SETTING };
  const keeper = new TokenKeeper(deps, outbound);
  return {
    deployments: new DeploymentService(deps, revisions),
    revisions,
    listeners: new ListenerService(deps),
    uploads: new UploadService(deps),
    logs: new LogService(deps),
    webhooks: new WebhookService(deps, revisions),
    integrations: new IntegrationService(deps),
    oauthProviders: new OAuthProviderService(deps, outbound),
    oauthFlows: new OAuthFlowService(deps, keeper, outbound),
    oauthTokens: new OAuthTokenService(deps, outbound),
    tenancy: new TenancyService(deps),
    metrics: new MetricsService(deps),
  };
}
