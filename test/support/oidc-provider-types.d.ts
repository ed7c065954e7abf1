/**
 * The few parts of `oidc-provider` (9.x, shipped without types) the test fixture uses.
 * Declared here rather than adding @types/oidc-provider for a test-only dependency.
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface ProviderClient {
    grantTypeAllowed(type: string): boolean;
  }

  interface Interaction {
    uid: string;
    grantId?: string;
    session?: { accountId: string };
    params: Record<string, unknown>;
    prompt: { name: string; details: Record<string, unknown> };
  }

  interface Grant {
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  type Ctx = unknown;

  export default class Provider {
    constructor(
      issuer: string,
      configuration: Record<string, unknown> & {
        findAccount?: (ctx: Ctx, sub: string) => Promise<{ accountId: string; claims: () => Promise<Record<string, unknown>> }>;
        interactions?: { url: (ctx: Ctx, interaction: Interaction) => string };
        issueRefreshToken?: (ctx: Ctx, client: ProviderClient, source: unknown) => Promise<boolean>;
        features?: Record<string, unknown> & {
          resourceIndicators?: {
            enabled: boolean;
            defaultResource?: (ctx: Ctx, client: ProviderClient, oneOf?: string) => Promise<string | string[] | undefined>;
            useGrantedResource?: (ctx: Ctx, model: unknown) => Promise<boolean>;
            getResourceServerInfo?: (ctx: Ctx, resource: string, client: ProviderClient) => Promise<Record<string, unknown>>;
          };
        };
      },
    );
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Grant: { new (init: { accountId: string; clientId: string }): Grant; find(id: string): Promise<Grant | undefined> };
  }
}
