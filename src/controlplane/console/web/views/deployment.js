import { api } from "../api.js";
import { badge, copyButton, h, replace, toast } from "../dom.js";
import { logTail, logView } from "../log-view.js";
import { poll } from "../poll.js";
import { secretsEditor } from "../secrets-editor.js";
import { timeAgo } from "../time.js";
import { confirmDelete } from "./delete-dialog.js";

const FAILED = ["CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED"];

/** One deployment: its revisions, live logs, a failure's reason, redeploy, secrets and delete. */
export function renderDeployment(main, id) {
  const title = h("h1", { id: "deployment-name" }, "…");
  const status = h("span");
  const url = h("p", { class: "url" });
  const failure = h("section", { class: "card failure", id: "failure", hidden: true, role: "alert" });
  const timeline = h("ol", { class: "timeline", id: "revisions" });
  const logs = logView(id);
  const secrets = secretsEditor("edit-secret");
  const secretsNote = h("p", { class: "hint", id: "secret-names" });
  let deployment;
  let failureShown;
  const timelineRows = new Map();

  replace(
    main,
    h("div", { class: "heading" }, title, status),
    url,
    h("p", {}, h("a", { class: "button", href: `#/d/${id}/agent` }, "Open the agent: assistants, threads, chat")),
    failure,
    h("section", { class: "card", "aria-labelledby": "revisions-title" }, h("h2", { id: "revisions-title" }, "Revisions"), timeline),
    logs.element,
    h(
      "section",
      { class: "card", "aria-labelledby": "secrets-title" },
      h("h2", { id: "secrets-title" }, "Secrets"),
      secretsNote,
      secrets.element,
      h("button", { type: "button", onclick: () => saveSecrets() }, "Save secrets (makes a new revision)"),
    ),
    h(
      "section",
      { class: "card danger", "aria-labelledby": "danger-title" },
      h("h2", { id: "danger-title" }, "Delete"),
      h("p", {}, "Deleting stops the deployment and removes its revisions, logs and data."),
      h("button", { type: "button", class: "destructive", id: "delete", onclick: () => remove() }, "Delete deployment…"),
    ),
  );

  const stopPolling = poll(async (signal) => {
    let revisions;
    try {
      [deployment, revisions] = await Promise.all([
        api("GET", `/v2/deployments/${id}`, undefined, { signal }),
        api("GET", `/v2/deployments/${id}/revisions?limit=50`, undefined, { signal }),
      ]);
    } catch (error) {
      // Once the view has stopped, <main> belongs to the next page (after a delete, the list).
      if (!signal.aborted && error.status === 404)
        replace(main, h("h1", {}, "Deployment not found"), h("p", {}, h("a", { href: "#/" }, "Back to the deployments")));
      throw error;
    }
    // A stopped view starts no log stream: nothing would ever stop it.
    if (signal.aborted) return;
    title.textContent = deployment.name;
    replace(status, badge(deployment.status));
    replace(url, h("code", {}, deployment.url), " ", copyButton(deployment.url, "Copy URL"));
    secretsNote.textContent = deployment.secrets.length
      ? `Set now: ${deployment.secrets.map((s) => s.name).join(", ")}. Saving replaces them all.`
      : "None set.";
    drawTimeline(revisions.resources);
    const latest = revisions.resources[0];
    if (latest) logs.show(latest.id);
    await showFailure(latest);
    if (!signal.aborted) main.dataset.ready = "true";
  }, 2000);

  function drawTimeline(revisions) {
    revisions.forEach((revision, index) => {
      const signature = JSON.stringify([revision.status, revision.status_message, revision.id === deployment.active_revision_id, index === 0]);
      const known = timelineRows.get(revision.id);
      if (known?.signature === signature) return;
      const item = h(
        "li",
        { "data-id": revision.id, "data-status": revision.status },
        h(
          "div",
          { class: "row" },
          badge(revision.status),
          h("code", { title: revision.id }, revision.id.slice(0, 8)),
          revision.id === deployment.active_revision_id ? h("span", { class: "tag" }, "serving") : null,
          timeAgo(revision.created_at),
        ),
        revision.status_message ? h("p", { class: "message" }, revision.status_message) : null,
        h(
          "div",
          { class: "row" },
          h("button", { type: "button", class: "small", onclick: () => logs.show(revision.id, "build") }, "Build log"),
          h("button", { type: "button", class: "small", onclick: () => logs.show(revision.id, "deploy") }, "Deploy log"),
          h("button", { type: "button", class: "small", onclick: () => redeploy(revision) }, index === 0 ? "Redeploy" : "Roll back to this"),
        ),
      );
      if (known) known.item.replaceWith(item);
      timelineRows.set(revision.id, { signature, item });
    });
    timeline.append(...revisions.map((revision) => timelineRows.get(revision.id).item));
  }

  async function showFailure(latest) {
    const failed = latest && FAILED.includes(latest.status);
    failure.hidden = !failed;
    if (!failed || failureShown === latest.id) return;
    failureShown = latest.id;
    const type = latest.status === "DEPLOY_FAILED" ? "deploy" : "build";
    const tail = await logTail(id, latest.id, type).catch(() => []);
    replace(
      failure,
      h("h2", {}, `Revision ${latest.id.slice(0, 8)}: ${latest.status}`),
      h("p", { class: "message" }, latest.status_message ?? "No reason was recorded."),
      h("h3", {}, `Last lines of the ${type} log`),
      h(
        "div",
        { class: "log tail" },
        tail.map((entry) => h("div", { class: "line" }, entry.message)),
      ),
    );
  }

  async function redeploy(revision) {
    try {
      await api("POST", `/v2/deployments/${id}/revisions/${revision.id}/redeploy`);
      toast(`Redeploying revision ${revision.id.slice(0, 8)}`);
    } catch (error) {
      toast(`Redeploy refused: ${error.message}`);
    }
  }

  async function saveSecrets() {
    try {
      await api("PATCH", `/v2/deployments/${id}`, { secrets: secrets.values() });
      toast("Secrets saved: a new revision is on its way");
    } catch (error) {
      toast(`Secrets not saved: ${error.message}`);
    }
  }

  async function remove() {
    if (!deployment) return;
    if (!(await confirmDelete(deployment.name))) return;
    try {
      await api("DELETE", `/v2/deployments/${id}`);
      toast(`Deleted ${deployment.name}`);
      location.hash = "#/";
    } catch (error) {
      toast(`Not deleted: ${error.message}`);
    }
  }

  return () => {
    stopPolling();
    logs.stop();
  };
}
