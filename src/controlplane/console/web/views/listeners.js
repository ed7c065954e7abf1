import { api } from "../api.js";
import { h, replace, toast } from "../dom.js";
import { timeAgo } from "../time.js";
import { deleteAfterConfirm } from "./delete-dialog.js";

/**
 * Listeners (Kubernetes clusters bound to the control plane; records for now): list, add
 * with a compute id and namespaces, delete after typing the compute id. The server refuses
 * them outside the self-hosted enterprise plan, and says so here.
 */
export function renderListeners(main) {
  const rows = h("tbody", { id: "listeners" });
  const computeId = h("input", {
    id: "listener-compute-id",
    required: true,
    maxlength: 253,
    autocomplete: "off",
    "aria-describedby": "listener-compute-id-hint",
  });
  const namespaces = h("input", {
    id: "listener-namespaces",
    autocomplete: "off",
    placeholder: "default, agents",
    "aria-describedby": "listener-namespaces-hint",
  });
  const version = h("input", { id: "listener-version", maxlength: 128, autocomplete: "off" });
  const error = h("p", { class: "error", role: "alert", id: "listener-error" });
  replace(
    main,
    h("h1", {}, "Listeners"),
    h(
      "form",
      {
        class: "card",
        onsubmit: (event) => {
          event.preventDefault();
          create();
        },
      },
      h("h2", {}, "Add a listener"),
      h("label", { for: computeId.id }, "Compute id (cluster name)"),
      computeId,
      h("p", { class: "hint", id: "listener-compute-id-hint" }, "Unique in the workspace; it cannot change later."),
      h("label", { for: namespaces.id }, "Kubernetes namespaces"),
      namespaces,
      h("p", { class: "hint", id: "listener-namespaces-hint" }, "Separated by commas."),
      h("label", { for: version.id }, "Version (optional)"),
      version,
      h("button", { type: "submit" }, "Add listener"),
      error,
    ),
    h(
      "div",
      { class: "scroll card" },
      h(
        "table",
        { class: "cards" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Compute id", "Type", "Namespaces", "Version", "Added", ""].map((t) => h("th", { scope: "col" }, t)),
          ),
        ),
        rows,
      ),
    ),
  );

  async function load() {
    const list = (await api("GET", "/v2/listeners?limit=100")).resources;
    replace(
      rows,
      list.length ? null : h("tr", {}, h("td", { colspan: 6 }, "No listeners yet.")),
      list.map((listener) =>
        h(
          "tr",
          { "data-id": listener.id },
          h("td", { "data-label": "Compute id" }, h("span", { class: "name" }, listener.compute_id)),
          h("td", { "data-label": "Type" }, listener.compute_type),
          h("td", { "data-label": "Namespaces" }, (listener.compute_config?.k8s_namespaces ?? []).join(", ") || "—"),
          h("td", { "data-label": "Version" }, listener.version ?? "—"),
          h("td", { "data-label": "Added" }, timeAgo(listener.created_at)),
          h(
            "td",
            { "data-label": "" },
            h("button", { type: "button", class: "small", "aria-label": `Delete listener ${listener.compute_id}`, onclick: () => remove(listener) }, "Delete"),
          ),
        ),
      ),
    );
    main.dataset.ready = "true";
  }

  async function create() {
    error.textContent = "";
    const names = namespaces.value
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean);
    try {
      const body = {
        compute_type: "k8s",
        compute_id: computeId.value,
        compute_config: { k8s_namespaces: names },
        ...(version.value ? { version: version.value } : {}),
      };
      const created = await api("POST", "/v2/listeners", body);
      computeId.value = "";
      namespaces.value = "";
      version.value = "";
      toast(`Added ${created.compute_id}`);
      await load();
    } catch (failure) {
      error.textContent = `Not added: ${failure.message}`;
    }
  }

  const remove = (listener) => deleteAfterConfirm(listener.compute_id, "listener", `/v2/listeners/${listener.id}`, load);

  load().catch((failure) => (error.textContent = `Could not list the listeners: ${failure.message}`));
}
