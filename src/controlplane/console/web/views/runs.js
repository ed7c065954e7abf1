import { agent } from "../api.js";
import { badge, h, replace, toast } from "../dom.js";
import { timeAgo } from "../time.js";

const ACTIVE = ["pending", "running"];

/**
 * One thread's runs (`GET /threads/{id}/runs`): status, when each was made and last
 * changed, its metadata, and Cancel for a pending or running one (the server cancels it;
 * the row then reads `interrupted`).
 */
export function runsPanel(deploymentId) {
  const rows = h("tbody", { id: "runs" });
  const heading = h("h2", { id: "runs-title" }, "Runs");
  const hint = h("p", { class: "hint" }, "Choose Runs on a thread to list them here.");
  const element = h(
    "section",
    { class: "card", "aria-labelledby": "runs-title" },
    h("div", { class: "heading" }, heading, h("button", { type: "button", class: "small", onclick: () => refresh() }, "Reload runs")),
    hint,
    // Focusable: the table may scroll sideways in its column, and a keyboard must reach that.
    h("div", { class: "scroll", tabindex: "0", role: "group", "aria-labelledby": "runs-title" },
      h("table", { class: "cards" },
        h("thead", {}, h("tr", {}, ["Run", "Status", "Created", "Updated", "Metadata", ""].map((t) => h("th", { scope: "col" }, t)))),
        rows)),
  );
  let threadId;

  async function refresh() {
    if (!threadId) return;
    const shown = threadId;
    const list = await agent(deploymentId, "GET", `/threads/${shown}/runs?limit=50`);
    if (shown !== threadId) return;
    hint.textContent = list.length ? "" : "This thread has no runs.";
    replace(
      rows,
      list.map((run) =>
        h("tr", { "data-id": run.run_id, "data-status": run.status },
          h("td", { "data-label": "Run" }, h("code", { title: run.run_id }, run.run_id.slice(0, 8))),
          h("td", { "data-label": "Status" }, badge(run.status)),
          h("td", { "data-label": "Created" }, timeAgo(run.created_at)),
          h("td", { "data-label": "Updated" }, timeAgo(run.updated_at)),
          h("td", { "data-label": "Metadata" }, h("code", { class: "metadata" }, JSON.stringify(run.metadata ?? {}))),
          h("td", { "data-label": "" }, ACTIVE.includes(run.status) ? cancelButton(run) : null),
        ),
      ),
    );
  }

  function cancelButton(run) {
    return h("button", {
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
    }, "Cancel");
  }

  return {
    element,
    /** Lists this thread's runs (and keeps listing them on each refresh). */
    async show(id) {
      threadId = id;
      heading.textContent = `Runs of thread ${id.slice(0, 8)}`;
      rows.replaceChildren();
      await refresh();
    },
    refresh,
  };
}
