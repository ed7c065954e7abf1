import { request } from "node:http";
import type { AgentEndpoint } from "./agent-endpoint.ts";

/** Whether an agent server answers 200 on /ok now (a process on its socket, a container on a port). */
export function answersOk(endpoint: AgentEndpoint | undefined, timeoutMs = 1_000): Promise<boolean> {
  if (!endpoint) return Promise.resolve(false);
  return new Promise((resolve) => {
    const probe = request(
      { socketPath: endpoint.socketPath, host: endpoint.host, port: endpoint.port, path: `${endpoint.basePath}/ok`, timeout: timeoutMs, agent: false },
      (answer) => {
        answer.resume();
        resolve(answer.statusCode === 200);
      },
    );
    probe.once("timeout", () => probe.destroy());
    probe.once("error", () => resolve(false));
    probe.end();
  });
}
