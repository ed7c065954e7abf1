import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { sendOversized } from "../support/oversized-body.ts";
import { MB, watchPeak } from "../support/process-memory.ts";
import { gzipBomb, manyTinyFiles, TAR_END, tarEntry } from "../support/upload-tarballs.ts";
import { gzipSync } from "node:zlib";
import { api, type Api } from "../pipeline/api.ts";
import { startPipelineControlPlane } from "../pipeline/control-plane.ts";

/**
 * Issue 31, items 4 and 5, on a real `slipway up` child process whose memory is read
 * from /proc: no request may raise its resident size by more than 64 MB over its bounded
 * buffers, an upload being checked holds up no other request, a deployment whose revision
 * failed holds no storage, and tar entries node-tar skips are refused.
 */
const BUDGET = 64 * MB;
/** /ok answers wanted while an upload is checked: with the check on the event loop there were none. */
const ANSWERS_WHILE_CHECKED = 3;

describe.each(BACKENDS)("what one request may cost the control plane, on %s", (backend) => {
  let root: string;
  let cp: ControlPlaneProcess;
  let cpApi: Api;
  let pid: number;
  let uploadDeployment: string;
  let bomb: Buffer;
  let tinyFiles: Buffer;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-request-memory-"));
    // Made before any connection is open: seconds of gzip would outlast the server's keep-alive.
    bomb = gzipBomb(2.5);
    tinyFiles = manyTinyFiles(250_000);
    // The upload URLs asked for here would meet the rate-limit table, which is not under test.
    cp = await startPipelineControlPlane(root, { backend, args: ["--no-rate-limit"] });
    cpApi = api(cp);
    pid = cp.child.pid!;
    const created = await cpApi.call("POST", "/v2/deployments", {
      name: "uploads",
      source: "internal_source",
      source_config: { deployment_type: "dev" },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    expect(created.status).toBe(201);
    uploadDeployment = created.body.id;
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    rmSync(root, { recursive: true, force: true });
  });

  async function uploadUrl(): Promise<string> {
    const url = await cpApi.call("POST", `/v2/deployments/${uploadDeployment}/upload-url`);
    expect(url.status).toBe(200);
    return url.body.upload_url;
  }

  /**
   * PUTs `body` to a fresh upload URL and, once the body is sent, asks GET /ok one call
   * after another until the upload's verdict: counts the /ok answered before it.
   */
  async function uploadWhileAskingOk(body: Buffer): Promise<{ status: number; detail: unknown; okAnswers: number }> {
    const url = await uploadUrl();
    let sent = false;
    let verdict: { status: number; detail: unknown } | undefined;
    const answered = new Promise<{ status: number; detail: unknown }>((resolve, reject) => {
      const req = request(url, { method: "PUT", headers: { "content-type": "application/gzip", "content-length": body.length } });
      req.on("response", (response) => {
        let text = "";
        response.on("data", (part) => (text += part));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, detail: JSON.parse(text).detail }));
      });
      req.on("error", reject);
      req.end(body, () => (sent = true));
    }).then((answer) => (verdict = answer));
    let okAnswers = 0;
    while (!verdict) {
      if (!sent) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      const ok = await fetch(`${cp.url}/ok`);
      if (ok.status === 200 && !verdict) okAnswers++;
    }
    return { ...(await answered), okAnswers };
  }

  it("refuses a 300 MB unauthenticated webhook by its Content-Length, before reading it", async () => {
    const peak = watchPeak(pid);
    const answer = await sendOversized(`${cp.url}/v1/integrations/github/${randomUUID()}/webhook`, {
      method: "POST",
      bytes: 300 * MB,
      chunked: false,
      headers: { "x-github-event": "push" },
    });
    expect(answer.status).toBe(413);
    expect(peak.peakGrowth()).toBeLessThan(BUDGET);
  });

  it("stops reading a chunked webhook body at the limit", async () => {
    const peak = watchPeak(pid);
    const answer = await sendOversized(`${cp.url}/v1/integrations/github/${randomUUID()}/webhook`, {
      method: "POST",
      bytes: 300 * MB,
      chunked: true,
      headers: { "x-github-event": "push" },
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text).detail).toMatch(/larger than this route's limit of 1 MiB/);
    expect(peak.peakGrowth()).toBeLessThan(BUDGET);
  });

  it("refuses a 2.6 MB gzip bomb (2.5 GiB of zeros) while streaming, in bounded memory, answering /ok meanwhile", async () => {
    const peak = watchPeak(pid);
    const answer = await uploadWhileAskingOk(bomb);
    expect(answer.status).toBe(422);
    expect(JSON.stringify(answer.detail)).toMatch(/decompression bomb/);
    expect(peak.peakGrowth()).toBeLessThan(BUDGET);
    expect(answer.okAnswers).toBeGreaterThanOrEqual(ANSWERS_WHILE_CHECKED);
  }, 120_000);

  it("refuses a tarball of 250,000 tiny files, answering /ok meanwhile", async () => {
    const peak = watchPeak(pid);
    const answer = await uploadWhileAskingOk(tinyFiles);
    expect(answer.status).toBe(422);
    expect(JSON.stringify(answer.detail)).toMatch(/more than 200000 entries/);
    expect(peak.peakGrowth()).toBeLessThan(BUDGET);
    expect(answer.okAnswers).toBeGreaterThanOrEqual(ANSWERS_WHILE_CHECKED);
  }, 120_000);

  it("refuses an upload holding a GNU sparse entry (S) or an unknown type (Z)", async () => {
    for (const [flag, type] of [
      ["S", "SparseFile"],
      ["Z", "unknown type 'Z'"],
    ]) {
      const archive = gzipSync(Buffer.concat([tarEntry("langgraph.json", "{}"), tarEntry("hidden", "data", flag), TAR_END]));
      const put = await fetch(await uploadUrl(), { method: "PUT", body: archive, headers: { "content-type": "application/gzip" } });
      expect(put.status).toBe(422);
      expect((await put.json()).detail[0]).toMatchObject({
        loc: ["body"],
        msg: `The upload was refused: hidden: entries of type ${type} are not allowed in an uploaded source.`,
      });
    }
  });

  it("opens no storage for deployments whose revision failed before fetching anything", async () => {
    const peak = watchPeak(pid);
    const ids: string[] = [];
    for (const name of ["gone-1", "gone-2", "gone-3"]) {
      const created = await cpApi.call("POST", "/v2/deployments", {
        name,
        source: "github",
        // Port 9 (discard) on loopback: nothing listens, the fetch fails at once.
        source_config: { repo_url: "http://127.0.0.1:9/nothing.git", deployment_type: "dev" },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
      });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
      const revision = await cpApi.waitForRevision(created.body.id, created.body.latest_revision_id, { timeoutMs: 60_000 });
      expect(revision.status).toBe("CREATE_FAILED");
    }
    for (const id of ids) expect(existsSync(join(root, "cp", "deployments", id)), `storage of ${id}`).toBe(false);
    expect(peak.peakGrowth()).toBeLessThan(BUDGET);
    for (const id of ids) expect((await cpApi.call("DELETE", `/v2/deployments/${id}`)).status).toBe(204);
  }, 180_000);
});
