import { api, session } from "../api.js";
import { badge, copyButton, h, replace, toast } from "../dom.js";
import { timeAgo } from "../time.js";

/** API keys: list, create (the key is shown once), revoke (a second click confirms). */
export function renderKeys(main) {
  const rows = h("tbody", { id: "keys" });
  const description = h("input", { id: "key-description", maxlength: 256, autocomplete: "off" });
  const scope = h(
    "select",
    { id: "key-scope" },
    h("option", { value: "workspace" }, "This workspace"),
    h("option", { value: "organization" }, "The whole organization"),
  );
  const created = h("div", { id: "new-key", role: "status", "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert" });
  replace(
    main,
    h("h1", {}, "API keys"),
    h(
      "form",
      {
        class: "card",
        onsubmit: (event) => {
          event.preventDefault();
          create();
        },
      },
      h("h2", {}, "New key"),
      h("label", { for: "key-description" }, "Description"),
      description,
      h("label", { for: "key-scope" }, "Reaches"),
      scope,
      h("button", { type: "submit" }, "Create key"),
      created,
      error,
    ),
    h(
      "div",
      { class: "scroll card" },
      h(
        "table",
        {},
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Key", "Description", "Reaches", "Created", "Status", ""].map((t) => h("th", { scope: "col" }, t)),
          ),
        ),
        rows,
      ),
    ),
  );

  async function load() {
    const list = await api("GET", "/v2/api-keys");
    replace(
      rows,
      list.resources.map((key) =>
        h(
          "tr",
          { "data-id": key.id },
          h("td", {}, h("code", {}, `${key.prefix}…`)),
          h("td", {}, key.description),
          h("td", {}, key.workspace_id ? h("code", { title: key.workspace_id }, key.workspace_id.slice(0, 8)) : "organization"),
          h("td", {}, timeAgo(key.created_at)),
          h("td", {}, badge(key.revoked ? "revoked" : "active")),
          h("td", {}, key.revoked ? null : revokeButton(key)),
        ),
      ),
    );
    main.dataset.ready = "true";
  }

  function revokeButton(key) {
    let armed = false;
    const button = h(
      "button",
      {
        type: "button",
        class: "small",
        onclick: async () => {
          if (!armed) {
            armed = true;
            button.textContent = "Confirm revoke";
            return;
          }
          try {
            await api("DELETE", `/v2/api-keys/${key.id}`);
            toast("Key revoked");
            await load();
          } catch (failure) {
            toast(`Not revoked: ${failure.message}`);
          }
        },
      },
      "Revoke",
    );
    return button;
  }

  async function create() {
    error.textContent = "";
    try {
      const body = { description: description.value, workspace_id: scope.value === "organization" ? null : session().workspaceId };
      const key = await api("POST", "/v2/api-keys", body);
      replace(
        created,
        h("p", {}, "Copy the new key now: it is not shown again."),
        h("code", { class: "secret" }, key.api_key),
        " ",
        copyButton(key.api_key, "Copy key"),
      );
      description.value = "";
      await load();
    } catch (failure) {
      error.textContent = `Could not create the key: ${failure.message}`;
    }
  }

  load().catch((failure) => (error.textContent = `Could not list the keys: ${failure.message}`));
}
