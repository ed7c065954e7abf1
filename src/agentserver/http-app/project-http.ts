import type { FastifyInstance, FastifyServerFactory } from "fastify";
import { corsPolicy } from "../../http/cors.ts";
import { apiKeyRefusal } from "../api-key.ts";
import { AuthRefusal, authenticate, type HandlerCache } from "../custom-auth/handlers.ts";
import { isOpenRequest } from "../custom-auth/register.ts";
import type { LanggraphConfig } from "../graphs/langgraph-config.ts";
import { registerConfigurableHeaders } from "../runs/configurable-headers.ts";
import { bundleUi, type UiAsset } from "../ui/bundle.ts";
import { registerUiRoutes } from "../ui/routes.ts";
import { builtInFetch } from "./builtin-fetch.ts";
import { composeFetch } from "./compose.ts";
import { answerThroughApp, frontServer, remoteAddresses, type Front } from "./front-server.ts";
import { loadProjectHttpApp, type FetchHandler, type ProjectHttpApp } from "./load-app.ts";

/**
 * The project's own HTTP parts of langgraph.json: `http.app`, `http.mount_prefix`,
 * `http.configurable_headers` and `ui`. Prepared before the server is built (the app
 * imported, the UI bundled: a failure stops the start), then wired in two steps.
 */
interface ProjectHttp {
  /** For createHttpServer: the Node server in front of Fastify; none when neither `http.app` nor a mount prefix asks for one. */
  serverFactory?: FastifyServerFactory;
  /** With the other hooks, before the routes: configurable headers. */
  registerHooks(app: FastifyInstance): void;
  /** With the built-in routes: /ui/... (unless http.disable_ui). */
  registerRoutes(app: FastifyInstance): void;
  /**
   * Once Fastify exists: requests start flowing through the project's app. Returns the
   * whole server as a fetch handler (the app, if any, with the built-in routes behind
   * it), for the in-process client.
   */
  attach(app: FastifyInstance, options: { apiKey?: string; exposedHeaders: string[]; customAuth?: HandlerCache; pythonApp?: FetchHandler }): FetchHandler;
}

export async function prepareProjectHttp(config: LanggraphConfig): Promise<ProjectHttp> {
  const { http } = config;
  // A Python app is loaded by the Python worker, with the graphs; it arrives in `attach`.
  const jsApp: ProjectHttpApp | undefined = http.app?.language === "js" ? await loadProjectHttpApp(http.app) : undefined;
  const uiAssets = new Map<string, UiAsset[]>();
  if (config.ui && !http.disabled.has("ui")) {
    const shared = config.ui.shared;
    await Promise.all(
      Object.entries(config.ui.components).map(async ([graphId, file]) => uiAssets.set(graphId, await bundleUi(graphId, file, config.root, shared))),
    );
  }
  const front: Front = { mountPrefix: http.mountPrefix };
  return {
    serverFactory: http.app || http.mountPrefix ? frontServer(front) : undefined,
    registerHooks: (app) => registerConfigurableHeaders(app, http.configurableHeaders),
    registerRoutes: (app) => {
      if (uiAssets.size > 0) registerUiRoutes(app, uiAssets, http.mountPrefix ?? "");
    },
    attach(app, options) {
      const builtIn = builtInFetch(app, (request) => remoteAddresses.get(request));
      const projectApp: ProjectHttpApp | undefined = jsApp ?? (options.pythonApp ? { kind: "fetch", fetch: options.pythonApp } : undefined);
      if (!projectApp) return builtIn;
      front.log = app.log;
      front.refuse = apiKeyRefusal(options.apiKey);
      const customAuth = options.customAuth;
      // The vendor's custom auth covers the project's own routes too.
      if (customAuth) {
        front.authenticate = async (request, path) => {
          if (isOpenRequest(request.method, path)) return undefined;
          try {
            await authenticate(customAuth, request);
            return undefined;
          } catch (error) {
            if (error instanceof AuthRefusal) return error;
            app.log.error({ err: error }, "custom auth handler failed");
            return { status: 500, message: "Custom auth handler failed", headers: {} };
          }
        };
      }
      front.cors = corsPolicy(http.cors, options.exposedHeaders).response;
      const dispatch = composeFetch(projectApp, builtIn, app.log);
      front.dispatch = dispatch;
      return (request) => answerThroughApp(request, front, dispatch);
    },
  };
}
