import type { AddressInfo } from "node:net";
import { startTestAgentServer, type TestAgentServer } from "./agent-server.ts";
import type { BackendName } from "./backends.ts";
import { startControlPlane, type ControlPlaneFixture, type Tenant } from "../controlplane/deployments-fixture.ts";

/** Both servers a fuzz suite sends to, on one back end: an agent server and a listening control plane with a tenant. */
export interface FuzzServers {
  agent: TestAgentServer;
  cp: ControlPlaneFixture;
  cpUrl: string;
  tenant: Tenant;
  close(): Promise<void>;
}

export async function startFuzzServers(backend: BackendName, agentOptions: Parameters<typeof startTestAgentServer>[1] = {}): Promise<FuzzServers> {
  const agent = await startTestAgentServer(backend, agentOptions);
  const cp = await startControlPlane(backend);
  await cp.app.listen({ host: "127.0.0.1", port: 0 });
  return {
    agent,
    cp,
    cpUrl: `http://127.0.0.1:${(cp.app.server.address() as AddressInfo).port}`,
    tenant: await cp.tenant(),
    async close() {
      await agent.close();
      await cp.close();
    },
  };
}
