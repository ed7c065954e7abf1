import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { TaskState } from "@a2a-js/sdk";
import { expect } from "vitest";
import { a2aClientFactory, answerOf, fetchWithHeader, send, userMessage } from "../support/a2a-client.ts";

/**
 * MCP and A2A through a deployment's URL (the router in front of the agent processes):
 * the official clients list and call a tool, read the agent card (whose URL is the
 * deployment's), and hold a two-message conversation on one context. With several
 * processes behind the URL, the MCP session goes on whichever process answers.
 */
export async function checkProtocolEndpoints(deploymentUrl: string, apiKey: string): Promise<void> {
  const withKey = fetchWithHeader("x-api-key", apiKey);
  const mcp = new McpClient({ name: "deployment-test", version: "1" });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${deploymentUrl}/mcp/`), { fetch: withKey }));
  expect((await mcp.listTools()).tools.map((tool) => tool.name)).toContain("agent");
  for (const text of ["one", "two", "three"]) {
    const result = await mcp.callTool({ name: "agent", arguments: { messages: [{ role: "human", content: text }] } });
    expect((result.structuredContent as { messages: Array<{ content: string }> }).messages.at(-1)?.content).toBe(`You said: ${text}`);
  }
  await mcp.close();

  const a2a = await a2aClientFactory(withKey).createFromUrl(`${deploymentUrl}/.well-known/agent-card.json?assistant_id=agent`, "");
  expect((await a2a.getAgentCard()).supportedInterfaces[0]?.url).toMatch(new RegExp(`^${deploymentUrl}/a2a/[0-9a-f-]{36}$`));
  const first = await send(a2a, userMessage("hello deployment"));
  expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  const second = await send(a2a, userMessage("again", first.contextId));
  expect(second.contextId).toBe(first.contextId);
  expect(answerOf(second)).toBe("You said: again");
}
