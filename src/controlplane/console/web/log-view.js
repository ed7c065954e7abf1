import { api } from "./api.js";
import { h } from "./dom.js";
import { events } from "./sse.js";

const MAX_LINES = 5000;

/**
 * A revision's build or deploy log, followed live (the API's `follow=true` event stream,
 * resumed after a lost connection from the last line seen), with a search box that
 * filters the lines shown and a "follow" switch that keeps the newest line in view.
 */
export function logView(deploymentId) {
  // autocomplete=off: Chrome restores the state of controls made while a page loads when
  // the user comes Back to it, after this code has read them, without a change event: the
  // select said "Deploy log" above the build log's lines. These start fresh on each load.
  const type = h(
    "select",
    { id: "log-type", autocomplete: "off", onchange: () => restart() },
    h("option", { value: "build" }, "Build log"),
    h("option", { value: "deploy" }, "Deploy log"),
  );
  const search = h("input", { id: "log-search", type: "search", autocomplete: "off", placeholder: "Search the log", oninput: () => filter() });
  const follow = h("input", { id: "log-follow", type: "checkbox", autocomplete: "off", checked: true });
  const count = h("span", { class: "hint", "aria-live": "polite" });
  const lines = h("div", { id: "log-lines", class: "log", role: "log", tabindex: "0", "aria-label": "Log lines" });
  const title = h("h2", {}, "Logs");
  const element = h(
    "section",
    { class: "card", "aria-labelledby": "logs-title" },
    Object.assign(title, { id: "logs-title" }),
    h(
      "div",
      { class: "toolbar" },
      h("label", { for: "log-type", class: "visually-hidden" }, "Which log"),
      type,
      h("label", { for: "log-search", class: "visually-hidden" }, "Search the log"),
      search,
      h("label", { class: "inline" }, follow, " Follow"),
      count,
    ),
    lines,
  );
  let controller;
  let revisionId;

  function matches(line) {
    const query = search.value.trim().toLowerCase();
    return !query || line.textContent.toLowerCase().includes(query);
  }

  function filter() {
    let shown = 0;
    for (const line of lines.children) {
      line.hidden = !matches(line);
      if (!line.hidden) shown++;
    }
    count.textContent = search.value.trim() ? `${shown} of ${lines.children.length} lines` : `${lines.children.length} lines`;
  }

  function add(entry) {
    const line = h("div", { class: `line ${entry.level ?? ""}` }, h("span", { class: "at" }, entry.timestamp?.slice(11, 19) ?? ""), " ", entry.message);
    line.hidden = !matches(line);
    lines.append(line);
    if (lines.children.length > MAX_LINES) lines.firstElementChild.remove();
    if (follow.checked) lines.scrollTop = lines.scrollHeight;
  }

  async function run(signal) {
    let lastId;
    while (!signal.aborted) {
      try {
        const response = await api("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?type=${type.value}&follow=true`, undefined, {
          raw: true,
          signal,
          headers: lastId ? { "last-event-id": lastId } : {},
        });
        for await (const { event, data } of events(response)) {
          if (event === "log") {
            add(data);
            lastId = data.id;
          } else if (event === "end") {
            filter();
            return;
          }
        }
        filter();
      } catch (error) {
        if (signal.aborted) return;
        if (error.status === 404) return;
      }
      // The stream broke before its end: wait a moment and resume after the last line.
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  function restart() {
    controller?.abort();
    lines.replaceChildren();
    if (!revisionId) return;
    controller = new AbortController();
    const timer = setInterval(filter, 1000);
    controller.signal.addEventListener("abort", () => clearInterval(timer));
    run(controller.signal).finally(filter);
  }

  return {
    element,
    /** Shows the log of this revision (from its start). */
    show(id, which) {
      if (which) type.value = which;
      if (id === revisionId && !which) return;
      revisionId = id;
      title.textContent = `Logs of revision ${id.slice(0, 8)}`;
      restart();
    },
    stop() {
      controller?.abort();
    },
  };
}

/** The last `count` lines of a revision's log, for a failure's summary. */
export async function logTail(deploymentId, revisionId, type, count = 30) {
  const page = await api("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?type=${type}&order=desc&limit=${count}`);
  return page.logs.reverse();
}
