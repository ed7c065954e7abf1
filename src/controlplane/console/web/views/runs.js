import { agent } from "../api.js";
import { badge, h, idCell, syncRows, toast } from "../dom.js";
import { pager } from "../pager.js";
import { timeAgo } from "../time.js";

const ACTIVE = ["pending", "running"];
/** Metadata keys the agent server sets on runs by itself. */
const SERVER_KEYS = new Set([
  "created_by",
  "graph_id",
  "assistant_id",
  "run_attempt",
  "thread_id",
  "run_id",
  "user_id",
  "langgraph_version",
  "langgraph_api_version",
  "langgraph_plan",
  "langgraph_host",
  "langgraph_api_url",
]);

/**
 * Metadata on one line ("note: …, graph_id: agent"), cut with an ellipsis where the
 * column ends; opening it shows the whole object as JSON. Strings are shown bare, other
 * values as JSON; all of it as text.
 */
export function metadataCell(metadata) {
  // The caller's own keys first: the ones the server adds to every run say less.
  const entries = Object.entries(metadata ?? {}).sort(([a], [b]) => Number(SERVER_KEYS.has(a)) - Number(SERVER_KEYS.has(b)));
  if (!entries.length) return h("span", { class: "hint" }, "—");
  const compact = entries.map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`).join(", ");
  return h("details", { class: "metadata" }, h("summary", { title: compact }, compact), h("pre", {}, JSON.stringify(metadata, null, 2)));
}

/**
 * One thread's runs (`GET /threads/{id}/runs`), a page at a time: status, when each was
 * made and last changed, its metadata, and Cancel for a pending or running one (the
 * server cancels it; the row then reads `interrupted`).
 */
export function runsPanel(deploymentId) {
  const rows = h("tbody", { id: "runs" });
  const heading = h("h2", { id: "runs-title" }, "Runs");
  const hint = h("p", { class: "hint" }, "Choose Runs on a thread to list them here.");
  const pages = pager("runs", () => refresh().catch(() => {}));
  const element = h(
    "section",
    { class: "card", id: "runs-panel", "aria-labelledby": "runs-title" },
    h("div", { class: "heading" }, heading, h("button", { type: "button", class: "small", onclick: () => refresh() }, "Reload runs")),
    hint,
    // Focusable: the table may scroll sideways in its column, and a keyboard must reach that.
    h(
      "div",
      { class: "scroll", tabindex: "0", role: "group", "aria-labelledby": "runs-title" },
      h(
        "table",
        { class: "cards" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Run", "Status", "Created", "Updated", "Metadata", ""].map((t) => h("th", { scope: "col" }, t)),
          ),
        ),
        rows,
      ),
    ),
    pages.element,
  );
  let threadId;

  async function refresh() {
    if (!threadId) return;
    const shown = threadId;
    const asked = pages.query();
    const list = await agent(deploymentId, "GET", `/threads/${shown}/runs?limit=${asked.limit}&offset=${asked.offset}`);
    if (shown !== threadId) return;
    const page = pages.shown(list, asked);
    if (!page) return;
    hint.textContent = page.length ? "" : "This thread has no runs.";
    // Only changed rows are drawn again: an opened metadata line stays open.
    syncRows(
      rows,
      page,
      (run) => run.run_id,
      (run) =>
        h(
          "tr",
          { "data-id": run.run_id, "data-status": run.status },
          h("td", { "data-label": "Run" }, idCell(run.run_id, "run")),
          h("td", { "data-label": "Status" }, badge(run.status)),
          h("td", { "data-label": "Created" }, timeAgo(run.created_at)),
          h("td", { "data-label": "Updated" }, timeAgo(run.updated_at)),
          h("td", { "data-label": "Metadata" }, metadataCell(run.metadata)),
          h("td", { "data-label": "" }, ACTIVE.includes(run.status) ? cancelButton(run) : null),
        ),
    );
  }

  function cancelButton(run) {
    return h(
      "button",
      {
        type: "button",
        class: "small",
        "aria-label": `Cancel run ${run.run_id}`,
        onclick: async (event) => {
          event.currentTarget.disabled = true;
          try {
            await agent(deploymentId, "POST", `/threads/${run.thread_id}/runs/${run.run_id}/cancel?action=interrupt`);
            toast(`Run ${run.run_id.slice(0, 8)} cancelled`);
          } catch (failure) {
            toast(`Not cancelled: ${failure.message}`);
          }
          await refresh();
        },
      },
      "Cancel",
    );
  }

  return {
    element,
    /** Lists this thread's runs from its newest (and keeps listing them on each refresh). */
    async show(id) {
      threadId = id;
      heading.textContent = `Runs of thread ${id.slice(0, 8)}`;
      rows.replaceChildren();
      pages.reset();
      element.scrollIntoView({ block: "nearest" });
      await refresh();
    },
    refresh,
  };
}
