import { agent, api } from "../api.js";
import { badge, h, replace } from "../dom.js";
import { poll } from "../poll.js";
import { timeAgo } from "../time.js";
import { chatPlayground } from "./chat.js";

/**
 * Inside a deployment, through its URL (the router checks the same API key): its
 * assistants, its threads with their state, and a chat playground.
 */
export function renderAgent(main, id) {
  const title = h("h1", {}, "Agent");
  const assistants = h("ul", { class: "plain", id: "assistants" });
  const threads = h("tbody", { id: "threads" });
  const state = h("pre", { class: "state", id: "thread-state", tabindex: "0", "aria-label": "Thread state" });
  const error = h("p", { class: "error", role: "alert" });
  const chat = chatPlayground(id, { onRunEnded: () => refreshThreads() });

  replace(
    main,
    h("p", {}, h("a", { href: `#/d/${id}` }, "← Deployment")),
    title,
    error,
    h("div", { class: "split" },
      chat.element,
      h("div", {},
        h("section", { class: "card", "aria-labelledby": "assistants-title" }, h("h2", { id: "assistants-title" }, "Assistants"), assistants),
        h(
          "section",
          { class: "card", "aria-labelledby": "threads-title" },
          h("div", { class: "heading" }, h("h2", { id: "threads-title" }, "Threads"), h("button", { type: "button", class: "small", onclick: () => refreshThreads() }, "Refresh")),
          h("div", { class: "scroll" },
            h("table", {}, h("thead", {}, h("tr", {}, ["Thread", "Status", "Updated", ""].map((t) => h("th", { scope: "col" }, t)))), threads)),
          state,
        ),
      ),
    ),
  );

  api("GET", `/v2/deployments/${id}`).then((d) => (title.textContent = d.name)).catch(() => {});

  async function loadAssistants() {
    const list = await agent(id, "POST", "/assistants/search", { limit: 100 });
    replace(
      assistants,
      list.map((assistant) =>
        h("li", {},
          h("strong", {}, assistant.name ?? assistant.graph_id),
          " ",
          h("code", { title: assistant.assistant_id }, assistant.graph_id),
          assistant.description ? h("p", { class: "hint" }, assistant.description) : null,
        ),
      ),
    );
    chat.setAssistants(list);
  }

  async function refreshThreads() {
    const list = await agent(id, "POST", "/threads/search", { limit: 50, sort_by: "updated_at", sort_order: "desc" });
    replace(
      threads,
      list.map((thread) =>
        h("tr", { "data-id": thread.thread_id },
          h("td", {}, h("code", { title: thread.thread_id }, thread.thread_id.slice(0, 8))),
          h("td", {}, badge(thread.status)),
          h("td", {}, timeAgo(thread.updated_at)),
          h("td", {},
            h("button", { type: "button", class: "small", onclick: () => showState(thread) }, "State"),
            " ",
            h("button", { type: "button", class: "small", onclick: () => chat.openThread(thread.thread_id) }, "Chat"),
          ),
        ),
      ),
    );
  }

  async function showState(thread) {
    const [current, history] = await Promise.all([
      agent(id, "GET", `/threads/${thread.thread_id}/state`),
      agent(id, "POST", `/threads/${thread.thread_id}/history`, { limit: 10 }),
    ]);
    state.textContent =
      `Thread ${thread.thread_id} (${thread.status}), ${history.length} recent checkpoints\n` + JSON.stringify(current.values, null, 2);
  }

  const stop = poll(async () => {
    try {
      if (!assistants.children.length) await loadAssistants();
      await refreshThreads();
      error.textContent = "";
      main.dataset.ready = "true";
    } catch (failure) {
      error.textContent = `The deployment did not answer: ${failure.message}`;
      throw failure;
    }
  }, 5000);
  return () => {
    stop();
    chat.stop();
  };
}
