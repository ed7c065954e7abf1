import { api } from "../api.js";
import { h, replace, toast } from "../dom.js";
import { timeAgo } from "../time.js";
import { deleteAfterConfirm } from "./delete-dialog.js";

/** Hosts a provider choice fills in; any other git host is typed. */
const PROVIDERS = [
  ["github", "GitHub", "https://github.com/"],
  ["gitlab", "GitLab", "https://gitlab.com/"],
  ["other", "Another git host", ""],
];

/**
 * Git host integrations: list, add (the token and webhook secret are sent once, sealed by
 * the server and never shown back), delete after typing the name.
 */
export function renderIntegrations(main) {
  const rows = h("tbody", { id: "integrations" });
  const provider = h(
    "select",
    { id: "integration-provider", onchange: () => (baseUrl.value = PROVIDERS.find(([value]) => value === provider.value)[2]) },
    PROVIDERS.map(([value, label]) => h("option", { value }, label)),
  );
  const name = h("input", { id: "integration-name", required: true, maxlength: 200, autocomplete: "off" });
  const baseUrl = h("input", { id: "integration-url", required: true, maxlength: 2048, autocomplete: "off", value: PROVIDERS[0][2] });
  const token = h("input", { id: "integration-token", type: "password", autocomplete: "new-password", "aria-describedby": "integration-token-hint" });
  const webhookSecret = h("input", { id: "integration-webhook-secret", type: "password", autocomplete: "new-password" });
  const error = h("p", { class: "error", role: "alert", id: "integration-error" });
  const field = (label, input) => h("div", { class: "field" }, h("label", { for: input.id }, label), input);
  replace(
    main,
    h("h1", {}, "Integrations"),
    h("p", { class: "hint" }, "Git hosts that deployments build from. Pick one when creating a deployment from git."),
    h(
      "form",
      {
        class: "card",
        onsubmit: (event) => {
          event.preventDefault();
          create();
        },
      },
      h("h2", {}, "Add a git host"),
      h("div", { class: "columns" }, field("Provider", provider), field("Name", name)),
      field("Base URL", baseUrl),
      h(
        "div",
        { class: "columns" },
        h(
          "div",
          { class: "field" },
          h("label", { for: token.id }, "Access token (optional)"),
          token,
          h("p", { class: "hint", id: "integration-token-hint" }, "Sealed by the server and never shown again."),
        ),
        field("Webhook secret (optional)", webhookSecret),
      ),
      h("button", { type: "submit" }, "Add integration"),
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
            ["Name", "Base URL", "Added", ""].map((t) => h("th", { scope: "col" }, t)),
          ),
        ),
        rows,
      ),
    ),
  );

  async function load() {
    const list = await api("GET", "/v1/integrations/github/install");
    replace(
      rows,
      list.length ? null : h("tr", {}, h("td", { colspan: 4 }, "No integrations yet.")),
      list.map((item) =>
        h(
          "tr",
          { "data-id": item.id },
          h("td", { "data-label": "Name" }, h("span", { class: "name" }, item.name)),
          h("td", { "data-label": "Base URL" }, h("code", {}, item.base_url)),
          h("td", { "data-label": "Added" }, timeAgo(item.created_at)),
          h(
            "td",
            { "data-label": "" },
            h("button", { type: "button", class: "small", "aria-label": `Delete integration ${item.name}`, onclick: () => remove(item) }, "Delete"),
          ),
        ),
      ),
    );
    main.dataset.ready = "true";
  }

  async function create() {
    error.textContent = "";
    try {
      const body = { name: name.value, base_url: baseUrl.value, token: token.value || undefined, webhook_secret: webhookSecret.value || undefined };
      const created = await api("POST", "/v1/integrations/github/install", body);
      // Secrets leave the page once: the fields are cleared whatever happens next.
      token.value = "";
      webhookSecret.value = "";
      name.value = "";
      toast(`Added ${created.name}`);
      await load();
    } catch (failure) {
      error.textContent = `Not added: ${failure.message}`;
    }
  }

  const remove = (item) => deleteAfterConfirm(item.name, "integration", `/v1/integrations/github/${item.id}`, load);

  load().catch((failure) => (error.textContent = `Could not list the integrations: ${failure.message}`));
}
