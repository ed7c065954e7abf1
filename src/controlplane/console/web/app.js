// The console's shell: a hash router (#/, #/new, #/d/<id>, #/d/<id>/agent, #/keys,
// #/integrations, #/listeners), the navigation, and the sign-in gate. Each view renders
// into <main> and answers a function that stops its timers when the page changes.

import { h, replace } from "./dom.js";
import { session, signOut } from "./api.js";
import { renderSignIn } from "./views/signin.js";
import { renderDeployments } from "./views/deployments.js";
import { renderCreate } from "./views/create.js";
import { renderDeployment } from "./views/deployment.js";
import { renderAgent } from "./views/agent.js";
import { renderKeys } from "./views/keys.js";
import { renderIntegrations } from "./views/integrations.js";
import { renderListeners } from "./views/listeners.js";

const ROUTES = [
  [/^#\/new$/, renderCreate],
  [/^#\/keys$/, renderKeys],
  [/^#\/integrations$/, renderIntegrations],
  [/^#\/listeners$/, renderListeners],
  [/^#\/d\/([0-9a-f-]{36})\/agent$/, renderAgent],
  [/^#\/d\/([0-9a-f-]{36})$/, renderDeployment],
  [/^#\/?$/, renderDeployments],
];

let stop = () => {};

function navigation(current) {
  const nav = document.getElementById("nav");
  if (!current) return replace(nav);
  replace(
    nav,
    h("a", { href: "#/" }, "Deployments"),
    h("a", { href: "#/new" }, "New deployment"),
    h("a", { href: "#/integrations" }, "Integrations"),
    h("a", { href: "#/listeners" }, "Listeners"),
    h("a", { href: "#/keys" }, "API keys"),
    h("span", { class: "workspace", title: current.workspaceId ?? "" }, current.workspaceName ?? ""),
    h(
      "button",
      {
        type: "button",
        class: "link",
        onclick: () => {
          signOut();
          route();
        },
      },
      "Sign out",
    ),
  );
}

function route() {
  stop();
  stop = () => {};
  const main = document.getElementById("main");
  // Views mark main[data-ready] once their data is shown; a new view starts unready.
  delete main.dataset.ready;
  const current = session();
  navigation(current);
  if (!current) {
    stop = renderSignIn(main, () => route()) ?? stop;
    return;
  }
  const hash = location.hash || "#/";
  for (const [pattern, render] of ROUTES) {
    const match = pattern.exec(hash);
    if (match) {
      stop = render(main, ...match.slice(1)) ?? stop;
      return;
    }
  }
  replace(main, h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the deployments")));
}

addEventListener("hashchange", () => {
  route();
  document.getElementById("main").focus({ preventScroll: true });
});
route();
