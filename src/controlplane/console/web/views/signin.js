import { h, replace } from "../dom.js";
import { saveSession, workspacesFor } from "../api.js";

/** Sign in with an API key; an organization key with several workspaces picks one. */
export function renderSignIn(main, done) {
  const key = h("input", { id: "api-key", name: "api-key", type: "password", autocomplete: "off", required: true, spellcheck: "false" });
  const error = h("p", { class: "error", role: "alert", id: "signin-error" });
  const choice = h("div");
  const submit = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    {
      class: "card narrow",
      onsubmit: (event) => {
        event.preventDefault();
        check();
      },
    },
    h("h1", {}, "Sign in"),
    h("p", {}, "Use an API key of this server (", h("code", {}, "slipway up"), " prints one on its first start). It is kept in this tab only."),
    h("label", { for: "api-key" }, "API key"),
    key,
    choice,
    error,
    submit,
  );
  replace(main, form);
  key.focus();

  async function check() {
    error.textContent = "";
    submit.disabled = true;
    try {
      const list = await workspacesFor(key.value.trim());
      const workspaces = list.resources;
      if (workspaces.length === 0) throw new Error("This key reaches no workspace.");
      if (workspaces.length === 1) return finish(workspaces[0]);
      pick(workspaces);
    } catch (failure) {
      error.textContent =
        failure.status === 401 || failure.status === 403 ? `That API key was not accepted: ${failure.message}` : `Could not sign in: ${failure.message}`;
    } finally {
      submit.disabled = false;
    }
  }

  function pick(workspaces) {
    const select = h(
      "select",
      { id: "workspace", name: "workspace" },
      workspaces.map((workspace) => h("option", { value: workspace.id }, workspace.name)),
    );
    replace(
      choice,
      h("label", { for: "workspace" }, "Workspace"),
      select,
      h("button", { type: "button", onclick: () => finish(workspaces.find((workspace) => workspace.id === select.value)) }, "Continue"),
    );
    submit.hidden = true;
    select.focus();
  }

  function finish(workspace) {
    saveSession({ key: key.value.trim(), workspaceId: workspace.id, workspaceName: workspace.name });
    if (!location.hash || location.hash === "#") location.hash = "#/";
    done();
  }
}
