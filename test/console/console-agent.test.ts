import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import type { Browser, Locator, Page } from "playwright-core";
import { create } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startPipelineControlPlane } from "../pipeline/control-plane.ts";
import { api, type Api } from "../pipeline/api.ts";
import { APPROVE_NODE, APPROVE_QUESTION, JS_URL, XSS, writeConsoleProject } from "./console-project.ts";
import { cspViolations, expectNoInjection, keepShots, launchConsoleBrowser, phoneOverflow, seriousViolations } from "./console-browser.ts";

/**
 * The console's second half in a real Chromium against a real `slipway up`: an assistant's
 * graph drawn as SVG, a thread's runs (cancelled from the page), an interrupt answered from
 * the chat's resume form, the integrations and listeners pages, and the deployment page
 * opening on its build log. Markup in node names, run metadata, interrupt values and
 * integration or listener names stays text. The deployment is made through the API (the
 * first console test already uploads one from the browser).
 */
/** How a row of the runs table is laid out, in words (see TIDY_RUN_ROW). */
function runsLayout(row: Locator) {
  return row.evaluate((tr) => {
    // A refresh may have drawn the row again just now: the caller polls.
    if (!tr.isConnected) return null;
    const box = (selector: string) => tr.querySelector(selector)!.getBoundingClientRect();
    const code = box(".id code");
    const copy = box(".id button");
    const summary = tr.querySelector("details.metadata summary") as HTMLElement;
    const line = parseFloat(getComputedStyle(summary).lineHeight);
    const table = tr.closest(".scroll")!;
    return {
      idOnOneLine: code.bottom > copy.top && copy.bottom > code.top,
      metadataLines: Math.round(summary.getBoundingClientRect().height / line),
      metadataCut: summary.scrollWidth > summary.clientWidth,
      tableFits: table.scrollWidth <= table.clientWidth,
    };
  });
}
/** A run row whose id is not clipped and whose metadata is one line ending in an ellipsis, in a table that needs no sideways scrolling. */
const TIDY_RUN_ROW = { idOnOneLine: true, metadataLines: 1, metadataCut: true, tableFits: true };

describe("the web console's graph, runs, interrupts, integrations and listeners, in Chromium", () => {
  let root: string;
  let shots: string;
  let cp: ControlPlaneProcess;
  let cpApi: Api;
  let client: Client;
  let browser: Browser;
  let page: Page;
  let dialogs: string[];
  let deploymentId: string;
  let step = 0;

  const shot = (name: string) => page.screenshot({ path: join(shots, `${String(++step).padStart(2, "0")}-${name}.png`), fullPage: true });
  const noInjection = () => expectNoInjection(page, dialogs);
  const threadShown = async () => /Thread ([0-9a-f-]{36})/.exec((await page.locator("#chat-thread").textContent())!)![1];

  /** The project as `slipway deploy <dir>` sends it: create, upload URL, PUT the archive, PATCH its path. */
  async function deployFolder(dir: string): Promise<string> {
    const created = await cpApi.call("POST", "/v2/deployments", {
      name: "console-agent",
      source: "internal_source",
      source_config: { deployment_type: "dev" },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const tarball = join(root, "project.tar.gz");
    await create({ gzip: true, file: tarball, cwd: dir, portable: true }, ["."]);
    const url = await cpApi.call("POST", `/v2/deployments/${id}/upload-url`);
    const put = await fetch(url.body.upload_url, { method: "PUT", body: readFileSync(tarball), headers: { "content-type": "application/gzip" } });
    expect(put.status).toBe(200);
    const patched = await cpApi.call("PATCH", `/v2/deployments/${id}`, { source_revision_config: { source_tarball_path: url.body.object_path } });
    expect((await cpApi.waitForRevision(id, patched.body.latest_revision_id)).status).toBe("DEPLOYED");
    return id;
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-console-agent-"));
    shots = join(root, "shots");
    mkdirSync(shots);
    cp = await startPipelineControlPlane(root);
    cpApi = api(cp);
    writeConsoleProject(join(root, "project"));
    deploymentId = await deployFolder(join(root, "project"));
    client = new Client({ apiUrl: `${cp.url}/deployments/${deploymentId}`, apiKey: cp.apiKey });
    ({ browser, page, dialogs } = await launchConsoleBrowser(cp.url));
    await page.goto(`${cp.url}/`);
    await page.getByLabel("API key").fill(cp.apiKey!);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("main[data-ready=true]").waitFor();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await cp?.kill("SIGTERM");
    keepShots(shots, /(graph|runs|runs-phone|runs-paged|interrupted|resumed|integrations|agent-phone|listeners-phone)\.png$/);
    rmSync(root, { recursive: true, force: true });
  });

  it("draws an assistant's graph as SVG, reached from the keyboard: start and end marked, conditional edges dashed, names as text", async () => {
    await page.goto(`${cp.url}/#/d/${deploymentId}/agent`);
    await page.locator("main[data-ready=true]").waitFor();
    // Tab through the page to the approve assistant's Graph button; its focus is visible.
    let focused = "";
    for (let presses = 0; presses < 80 && focused !== "Graph of approve"; presses++) {
      await page.keyboard.press("Tab");
      focused = await page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? "");
    }
    expect(focused).toBe("Graph of approve");
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe("none");
    await page.keyboard.press("Enter");
    const drawing = page.locator("#graph svg.graph");
    await drawing.waitFor();
    expect(await drawing.getAttribute("role")).toBe("img");
    const names = await drawing.locator("g.node").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-id")));
    expect(names.sort()).toEqual([APPROVE_NODE, "__end__", "__start__", "record"].sort());
    expect(await drawing.locator("g.node.start text").textContent()).toBe("__start__");
    expect(await drawing.locator("g.node.end text").textContent()).toBe("__end__");
    // The node named with markup is a text node inside <text> (shortened), its full name in <title>.
    const marked = drawing.locator("g.node.step", { has: page.locator("title", { hasText: APPROVE_NODE }) });
    expect(await marked.locator("title").textContent()).toBe(APPROVE_NODE);
    expect(await marked.locator("text").evaluate((el) => [...el.childNodes].every((child) => child.nodeType === Node.TEXT_NODE))).toBe(true);
    // ask → record and ask → __end__ are conditional, drawn dashed; the others solid.
    const dashes = await drawing
      .locator("g.edge")
      .evaluateAll((edges) =>
        edges.map(
          (edge) =>
            `${edge.getAttribute("data-source") === "__start__" ? "start" : edge.getAttribute("data-source") === "record" ? "record" : "ask"}→${edge.getAttribute("data-target")} ${getComputedStyle(edge.querySelector("path")!).strokeDasharray}`,
        ),
      );
    expect(dashes.sort()).toEqual([`start→${APPROVE_NODE} none`, "ask→__end__ 6px, 4px", "ask→record 6px, 4px", "record→__end__ none"].sort());
    // No edge passes through a node: ask → __end__ skips record's layer and goes round it
    // (points along each drawn path, inside no node's box but at its own ends).
    const crossings = await drawing.evaluate((svg) => {
      const rects = [...svg.querySelectorAll("g.node")].map((node) => ({
        id: node.getAttribute("data-id"),
        box: (node.querySelector("rect") as SVGRectElement).getBBox(),
      }));
      return [...svg.querySelectorAll("g.edge path")].flatMap((path) => {
        const line = path as SVGPathElement;
        const length = line.getTotalLength();
        const points = Array.from({ length: 99 }, (_, i) => line.getPointAtLength((length * (i + 1)) / 100));
        const edge = `${path.parentElement!.getAttribute("data-source")}→${path.parentElement!.getAttribute("data-target")}`;
        return rects
          .filter(({ box }) => points.some((p) => p.x > box.x + 1 && p.x < box.x + box.width - 1 && p.y > box.y + 1 && p.y < box.y + box.height - 1))
          .map(({ id }) => `${edge} crosses ${id}`);
      });
    });
    expect(crossings).toEqual([]);
    // Layers top to bottom: __start__ above the asking node, above record, above __end__.
    const y = async (node: Locator) => Number(await node.locator("rect").getAttribute("y"));
    const byId = (id: string) => drawing.locator(`g.node[data-id="${id}"]`);
    const heights = [await y(byId("__start__")), await y(marked), await y(byId("record")), await y(byId("__end__"))];
    expect([...heights].sort((a, b) => a - b)).toEqual(heights);
    expect(new Set(heights).size).toBe(4);
    await shot("graph");
    await noInjection();
  });

  it("lists a thread's runs with times and metadata as text, and cancels a pending and a running one on the server", async () => {
    const thread = await client.threads.create({ metadata: { graph_id: "slow" } });
    const input = { messages: [{ role: "human", content: "take your time" }] };
    // Streamed (messages mode), the slow model takes a minute; invoked plainly it answers at once.
    const running = await client.runs.create(thread.thread_id, "slow", { input, streamMode: ["messages-tuple"], metadata: { note: XSS, link: JS_URL } });
    await expect.poll(async () => (await client.runs.get(thread.thread_id, running.run_id)).status, { timeout: 30_000 }).toBe("running");
    const pending = await client.runs.create(thread.thread_id, "slow", {
      input,
      streamMode: ["messages-tuple"],
      multitaskStrategy: "enqueue",
      metadata: { note: `second ${XSS}` },
    });

    await page.getByRole("button", { name: "Refresh", exact: true }).click();
    await page.locator(`#threads tr[data-id="${thread.thread_id}"]`).getByRole("button", { name: "Runs" }).click();
    const runningRow = page.locator(`#runs tr[data-id="${running.run_id}"]`);
    const pendingRow = page.locator(`#runs tr[data-id="${pending.run_id}"]`);
    await expect.poll(() => runningRow.getAttribute("data-status")).toBe("running");
    expect(await pendingRow.getAttribute("data-status")).toBe("pending");
    // Metadata as one line of "key: value" (strings bare), the whole JSON when opened.
    const summary = runningRow.locator("details.metadata summary");
    // The run's own keys first, then those the server adds.
    const line = (await summary.textContent())!;
    expect(line.startsWith(`note: ${XSS}, link: ${JS_URL}, `)).toBe(true);
    expect(line).toContain("graph_id: slow");
    // The id: its first 8 characters, the whole in the tooltip and on the copy button.
    expect(await runningRow.locator(".id code").textContent()).toBe(running.run_id.slice(0, 8));
    expect(await runningRow.locator(".id code").getAttribute("title")).toBe(running.run_id);
    await runningRow.getByRole("button", { name: `Copy run id: ${running.run_id}` }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(running.run_id);
    // Times are relative, exact on hover.
    expect(await runningRow.locator("time").first().getAttribute("title")).toBeTruthy();
    expect(await runningRow.locator("time").first().textContent()).toMatch(/ago|just now/);
    await expect.poll(() => runsLayout(runningRow)).toEqual(TIDY_RUN_ROW);
    await page.locator("#runs-panel").scrollIntoViewIfNeeded();
    await shot("runs");
    expect(await phoneOverflow(page)).toEqual([]);
    await expect.poll(() => runsLayout(runningRow)).toEqual(TIDY_RUN_ROW);
    await shot("runs-phone");
    await page.setViewportSize({ width: 1280, height: 800 });
    await summary.click();
    expect(await runningRow.locator("details.metadata pre").textContent()).toContain(`"note": ${JSON.stringify(XSS)}`);
    // A refresh draws only the rows that changed: the opened line stays open.
    const reloaded = page.waitForResponse((response) => response.url().includes(`/threads/${thread.thread_id}/runs?limit=`));
    await page.getByRole("button", { name: "Reload runs" }).click();
    await reloaded;
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
    expect(await runningRow.locator("details.metadata").evaluate((details) => (details as HTMLDetailsElement).open)).toBe(true);
    await noInjection();

    await pendingRow.getByRole("button", { name: /Cancel run/ }).click();
    await expect.poll(async () => (await client.runs.get(thread.thread_id, pending.run_id)).status, { timeout: 15_000 }).toBe("interrupted");
    await runningRow.getByRole("button", { name: /Cancel run/ }).click();
    await expect.poll(async () => (await client.runs.get(thread.thread_id, running.run_id)).status, { timeout: 15_000 }).toBe("interrupted");
    // The row follows on the page's next refresh (every 5 s).
    await expect.poll(() => runningRow.getAttribute("data-status"), { timeout: 10_000 }).toBe("interrupted");
    expect(await page.locator("#runs button", { hasText: "Cancel" }).count()).toBe(0);
  });

  it("pages through more than 50 threads and more than 50 runs of a thread, from the keyboard too", async () => {
    await Promise.all(Array.from({ length: 60 }, (_, i) => client.threads.create({ metadata: { batch: `page ${i}` } })));
    // 55 runs that wait an hour before starting: listed as pending, costing nothing meanwhile.
    const busy = await client.threads.create();
    for (let i = 0; i < 55; i++) {
      await client.runs.create(busy.thread_id, "agent", { input: { messages: [] }, afterSeconds: 3600, multitaskStrategy: "enqueue" });
    }
    // The pages as the API answers them, newest change first (the console's order).
    const threadPage = async (offset: number) =>
      (await client.threads.search({ limit: 50, offset, sortBy: "updated_at", sortOrder: "desc" })).map((thread) => thread.thread_id);
    const everyThread = (await client.threads.search({ limit: 1000 })).map((thread) => thread.thread_id).sort();
    const everyRun = (await client.runs.list(busy.thread_id, { limit: 1000 })).map((run) => run.run_id).sort();
    expect(everyThread.length).toBeGreaterThan(60);
    expect(everyRun.length).toBe(55);
    const ids = (rows: Locator) => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-id")!));
    const threadRows = page.locator("#threads tr[data-id]");
    const threadPager = page.locator(".pager", { has: page.getByRole("button", { name: "Older threads" }) });

    // (A refresh made while the threads were being created may show an older first page: wait for today's.)
    await page.getByRole("button", { name: "Refresh", exact: true }).click();
    const first = await threadPage(0);
    await expect.poll(() => ids(threadRows)).toEqual(first);
    expect(await threadPager.textContent()).toContain("Threads 1–50");
    expect(await page.getByRole("button", { name: "Newer threads" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Older threads" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => threadPager.textContent()).toContain(`Threads 51–${everyThread.length}`);
    const second = await ids(threadRows);
    expect(second).toEqual(await threadPage(50));
    expect([...first, ...second].sort()).toEqual(everyThread);
    // The last page: Older is disabled, and the keyboard's focus went to Newer (not lost to the page).
    expect(await page.getByRole("button", { name: "Older threads" }).isDisabled()).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Newer threads");
    // The page's refresh (every 5 s) keeps the page chosen.
    await page.getByRole("button", { name: "Refresh", exact: true }).click();
    await expect.poll(() => threadPager.textContent()).toContain("Threads 51–");
    await page.getByRole("button", { name: "Newer threads" }).click();
    await expect.poll(() => threadPager.textContent()).toContain("Threads 1–50");

    await page.locator(`#threads tr[data-id="${busy.thread_id}"]`).getByRole("button", { name: "Runs" }).click();
    const runRows = page.locator("#runs tr[data-id]");
    await expect.poll(() => runRows.count()).toBe(50);
    expect(await runRows.evaluateAll((trs) => trs.every((tr) => tr.getAttribute("data-status") === "pending"))).toBe(true);
    const newest = await ids(runRows);
    await page.getByRole("button", { name: "Older runs" }).click();
    await expect.poll(() => runRows.count()).toBe(5);
    expect([...newest, ...(await ids(runRows))].sort()).toEqual(everyRun);
    expect(await page.locator(".pager", { has: page.getByRole("button", { name: "Older runs" }) }).textContent()).toContain("Runs 51–55");
    await shot("runs-paged");
    await page.getByRole("button", { name: "Newer runs" }).click();
    await expect.poll(() => runRows.count()).toBe(50);
  });

  it("shows an interrupt's value as text and resumes it from the form, with JSON and with plain text, streaming the continuation", async () => {
    await page.getByRole("button", { name: "New thread" }).click();
    await page.locator("#chat-assistant").selectOption({ label: "approve (approve)" });
    await page.getByLabel("Message").fill("may I?");
    await page.getByRole("button", { name: "Send" }).click();
    const form = page.locator("#interrupt");
    await form.waitFor({ timeout: 30_000 });
    expect(await page.locator("#interrupt-values pre").textContent()).toBe(JSON.stringify({ question: APPROVE_QUESTION }, null, 2));
    await expect.poll(() => page.locator("#run-status").textContent()).toBe("interrupted");
    const threadId = await threadShown();
    expect((await client.threads.get(threadId)).status).toBe("interrupted");
    await shot("interrupted");
    await noInjection();

    // Opened again from the threads list, the pending interrupt is read from the thread's state.
    await page.getByRole("button", { name: "New thread" }).click();
    expect(await form.isHidden()).toBe(true);
    await page.getByRole("button", { name: "Refresh", exact: true }).click();
    await page.locator(`#threads tr[data-id="${threadId}"]`).getByRole("button", { name: "Chat" }).click();
    await form.waitFor();
    expect(await page.locator("#interrupt-values pre").textContent()).toBe(JSON.stringify({ question: APPROVE_QUESTION }, null, 2));

    await page.getByLabel("Resume value").fill('{"approved": true}');
    await page.getByRole("button", { name: "Resume" }).click();
    const answer = page.locator("#transcript .message.ai .text").last();
    await expect.poll(() => answer.textContent(), { timeout: 30_000 }).toBe('answer: {"approved":true}');
    await expect.poll(() => page.locator("#run-status").textContent()).toBe("success");
    expect(await form.isHidden()).toBe(true);
    expect((await client.threads.get(threadId)).status).toBe("idle");

    // Again on the same thread; this time the answer is plain text (not JSON), with markup in it.
    await page.getByLabel("Message").fill("and now?");
    await page.getByRole("button", { name: "Send" }).click();
    await form.waitFor({ timeout: 30_000 });
    // Resume is enabled once the interrupted run has ended (its stream closes after the interrupt shows).
    await page.locator("#resume:enabled").waitFor();
    await page.getByLabel("Resume value").fill(`yes ${XSS}`);
    // From the keyboard: Tab from the value reaches Resume.
    await page.getByLabel("Resume value").press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("resume");
    await page.keyboard.press("Enter");
    await expect.poll(() => answer.textContent(), { timeout: 30_000 }).toBe(`answer: ${JSON.stringify(`yes ${XSS}`)}`);
    expect(await page.locator("#transcript .message.resume .text").last().textContent()).toBe(`yes ${XSS}`);
    const state = await client.threads.getState(threadId);
    expect((state.values as { messages: { content: string }[] }).messages.at(-1)!.content).toBe(`answer: ${JSON.stringify(`yes ${XSS}`)}`);
    await shot("resumed");
    await noInjection();
  }, 120_000);

  it("has no serious accessibility violations on the agent page with its graph and runs, and fits a phone", async () => {
    expect(await seriousViolations(page)).toEqual([]);
    expect(await phoneOverflow(page)).toEqual([]);
    await shot("agent-phone");
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await cspViolations(page)).toEqual([]);
  });

  it("adds a git integration (its token never shown back), refuses a javascript: URL as text, and deletes after the name is typed", async () => {
    const name = `${XSS} ${JS_URL}`;
    await page.getByRole("link", { name: "Integrations" }).click();
    await page.locator("main[data-ready=true]").waitFor();
    await page.getByLabel("Provider").selectOption({ label: "Another git host" });
    expect(await page.getByLabel("Base URL").inputValue()).toBe("");
    await page.getByLabel("Name").fill(name);
    await page.getByLabel("Base URL").fill(JS_URL);
    await page.getByLabel(/Access token/).fill("tok-never-shown-back");
    await page.getByRole("button", { name: "Add integration" }).click();
    await expect.poll(() => page.locator("#integration-error").textContent()).toContain("base_url");
    await noInjection();

    await page.getByLabel("Base URL").fill("http://127.0.0.1:9/team/");
    await page.getByRole("button", { name: "Add integration" }).click();
    const row = page.locator("#integrations tr", { hasText: "127.0.0.1" });
    await row.waitFor();
    expect(await row.locator(".name").textContent()).toBe(name);
    expect(await page.getByLabel(/Access token/).inputValue()).toBe("");
    expect(await page.content()).not.toContain("tok-never-shown-back");
    const listed = await cpApi.call("GET", "/v1/integrations/github/install");
    expect(listed.body).toEqual([expect.objectContaining({ name, base_url: expect.stringContaining("127.0.0.1:9") })]);
    expect(JSON.stringify(listed.body)).not.toContain("tok-never-shown-back");
    expect(await seriousViolations(page)).toEqual([]);
    await shot("integrations");
    await noInjection();

    await row.getByRole("button", { name: /Delete integration/ }).click();
    const dialog = page.locator("dialog");
    await dialog.getByLabel("Integration name").fill("not its name");
    expect(await dialog.getByRole("button", { name: "Delete" }).isDisabled()).toBe(true);
    await dialog.getByLabel("Integration name").fill(name);
    await dialog.getByRole("button", { name: "Delete" }).click();
    await expect.poll(() => page.locator("#integrations tr[data-id]").count()).toBe(0);
    expect((await cpApi.call("GET", "/v1/integrations/github/install")).body).toEqual([]);
  });

  it("adds a listener, shows a refused namespace as the server's words, and deletes after the compute id is typed", async () => {
    await page.getByRole("link", { name: "Listeners" }).click();
    await page.locator("main[data-ready=true]").waitFor();
    await page.getByLabel(/Compute id/).fill(XSS);
    await page.getByLabel("Kubernetes namespaces").fill("default, Not_A_Namespace");
    await page.getByRole("button", { name: "Add listener" }).click();
    await expect.poll(() => page.locator("#listener-error").textContent()).toContain("k8s_namespaces");
    await page.getByLabel("Kubernetes namespaces").fill("default, agents");
    await page.getByRole("button", { name: "Add listener" }).click();
    const row = page.locator("#listeners tr[data-id]");
    await row.waitFor();
    expect(await row.locator(".name").textContent()).toBe(XSS);
    expect(await row.textContent()).toContain("default, agents");
    expect((await cpApi.call("GET", "/v2/listeners")).body.resources).toEqual([
      expect.objectContaining({ compute_id: XSS, compute_config: { k8s_namespaces: ["default", "agents"] } }),
    ]);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await phoneOverflow(page)).toEqual([]);
    await shot("listeners-phone");
    await page.setViewportSize({ width: 1280, height: 800 });
    await noInjection();

    await row.getByRole("button", { name: /Delete listener/ }).click();
    await page.locator("dialog").getByLabel("Listener name").fill(XSS);
    await page.locator("dialog").getByRole("button", { name: "Delete" }).click();
    await expect.poll(() => page.locator("#listeners tr[data-id]").count()).toBe(0);
    expect((await cpApi.call("GET", "/v2/listeners")).body.resources).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
  });

  it("a deployment page's poll answered after the user moved on writes nothing into the next page", async () => {
    await page.goto(`${cp.url}/#/d/${deploymentId}`);
    await page.locator("main[data-ready=true]").waitFor();
    // Hold the page's next GET of the deployment; answer it 404 once the list is shown.
    const url = `${cp.url}/v2/deployments/${deploymentId}`;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked!: () => void;
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    let answered!: Promise<void>;
    await page.route(url, (route) => {
      asked();
      answered = held.then(() => route.fulfill({ status: 404, contentType: "application/json", body: '{"detail":"Deployment not found"}' })).catch(() => {});
    });
    await waiting;
    await page.getByRole("link", { name: "Deployments" }).click();
    await page.locator("#deployments").waitFor();
    release();
    await answered;
    await page.unroute(url);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
    expect(await page.locator("main h1").textContent()).toBe("Deployments");
  });

  it("opens a deployment page on its build log, even when the user comes Back to it after choosing the deploy log", async () => {
    await page.goto(`${cp.url}/#/d/${deploymentId}`);
    await page.locator("main[data-ready=true]").waitFor();
    expect(await page.locator("#log-type").inputValue()).toBe("build");
    await page.locator("#log-type").selectOption("deploy");
    await page.locator("#log-follow").uncheck();
    // Away to another document and Back: Chrome restores the state of controls made during the load.
    await page.goto(`${cp.url}/ok`);
    await page.goBack();
    await page.locator("main[data-ready=true]").waitFor();
    await expect.poll(() => page.locator("#log-lines .line").count(), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await page.locator("#log-type").inputValue()).toBe("build");
    expect(await page.locator("#log-follow").isChecked()).toBe(true);
    // The lines are the build's (what the select says), not the deploy's.
    const deployment = (await cpApi.call("GET", `/v2/deployments/${deploymentId}`)).body;
    const build = await cpApi.logs(deploymentId, deployment.latest_revision_id, "build");
    expect(await page.locator("#log-lines .line").first().textContent()).toContain(build[0]);
  });
});
