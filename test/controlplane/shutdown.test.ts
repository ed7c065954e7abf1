import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { startPipelineControlPlane } from "../pipeline/control-plane.ts";

const root = mkdtempSync(join(tmpdir(), "slipway-shutdown-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it("stops on SIGTERM while a client holds a request whose body never ends", async () => {
  const cp = await startPipelineControlPlane(root, { env: { SLIPWAY_STOP_GRACE_SECONDS: "1" } });
  const { hostname, port } = new URL(cp.url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  // Half a body: the server keeps waiting for the rest (up to Node's 300 s request timeout).
  socket.write('POST /v2/deployments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":');
  socket.resume();
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve("connection closed")));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const exited = cp.kill("SIGTERM").then(() => "exited");
  const deadline = new Promise<string>((resolve) => setTimeout(() => resolve("still running after 30 s"), 30_000).unref());
  // Before the cut-off after the grace period, the shutdown waited on this request.
  expect(await Promise.race([exited, deadline])).toBe("exited");
  expect(await Promise.race([closed, deadline])).toBe("connection closed");
}, 90_000);
