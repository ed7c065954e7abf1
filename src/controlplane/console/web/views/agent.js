import { agent, api } from "../api.js";
import { badge, h, idCell, replace, syncRows } from "../dom.js";
import { pager } from "../pager.js";
import { poll } from "../poll.js";
import { timeAgo } from "../time.js";
import { graphDrawing, edgeList } from "../graph-view.js";
import { chatPlayground } from "./chat.js";
import { runsPanel } from "./runs.js";

/**
 * Inside a deployment, through its URL (the router checks the same API key): its
 * assistants and their graphs, its threads with their state and runs, and a chat playground.
 */
export function renderAgent(main, id) {
  const title = h("h1", {}, "Agent");
  const assistants = h("ul", { class: "plain", id: "assistants" });
  const threads = h("tbody", { id: "threads" });
  const state = h("pre", { class: "state", id: "thread-state", tabindex: "0", "aria-label": "Thread state" });
  const error = h("p", { class: "error", role: "alert" });
  const graph = h("section", { class: "card graph-card", id: "graph", "aria-labelledby": "graph-title", hidden: true });
  const runs = runsPanel(id);
  const chat = chatPlayground(id, { onRunEnded: () => refreshThreads().then(() => runs.refresh()) });
  const threadPages = pager("threads", () => refreshThreads().catch(() => {}));

  replace(
    main,
    h("p", {}, h("a", { href: `#/d/${id}` }, "← Deployment")),
    title,
    error,
    graph,
    h(
      "div",
      { class: "split" },
      chat.element,
      h("section", { class: "card", "aria-labelledby": "assistants-title" }, h("h2", { id: "assistants-title" }, "Assistants"), assistants),
    ),
    h(
      "section",
      { class: "card", "aria-labelledby": "threads-title" },
      h(
        "div",
        { class: "heading" },
        h("h2", { id: "threads-title" }, "Threads"),
        h("button", { type: "button", class: "small", onclick: () => refreshThreads() }, "Refresh"),
      ),
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { class: "cards" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Thread", "Status", "Updated", ""].map((t) => h("th", { scope: "col" }, t)),
            ),
          ),
          threads,
        ),
      ),
      threadPages.element,
      state,
    ),
    runs.element,
  );

  api("GET", `/v2/deployments/${id}`)
    .then((d) => (title.textContent = d.name))
    .catch(() => {});

  async function loadAssistants() {
    const list = await agent(id, "POST", "/assistants/search", { limit: 100 });
    replace(
      assistants,
      list.map((assistant) =>
        h(
          "li",
          {},
          h("strong", {}, assistant.name ?? assistant.graph_id),
          " ",
          h("code", { title: assistant.assistant_id }, assistant.graph_id),
          " ",
          h(
            "button",
            { type: "button", class: "small", "aria-label": `Graph of ${assistant.name ?? assistant.graph_id}`, onclick: () => showGraph(assistant) },
            "Graph",
          ),
          assistant.description ? h("p", { class: "hint" }, assistant.description) : null,
        ),
      ),
    );
    chat.setAssistants(list);
  }

  /** One page of threads, the latest changed first (the page stays put across refreshes). */
  async function refreshThreads() {
    const asked = threadPages.query();
    const list = await agent(id, "POST", "/threads/search", { ...asked, sort_by: "updated_at", sort_order: "desc" });
    const page = threadPages.shown(list, asked);
    if (!page) return;
    syncRows(
      threads,
      page,
      (thread) => thread.thread_id,
      (thread) =>
        h(
          "tr",
          { "data-id": thread.thread_id },
          h("td", { "data-label": "Thread" }, idCell(thread.thread_id, "thread")),
          h("td", { "data-label": "Status" }, badge(thread.status)),
          h("td", { "data-label": "Updated" }, timeAgo(thread.updated_at)),
          h(
            "td",
            { "data-label": "" },
            h("button", { type: "button", class: "small", onclick: () => showState(thread) }, "State"),
            " ",
            h("button", { type: "button", class: "small", onclick: () => runs.show(thread.thread_id) }, "Runs"),
            " ",
            h("button", { type: "button", class: "small", onclick: () => openChat(thread.thread_id) }, "Chat"),
          ),
        ),
    );
  }

  async function openChat(threadId) {
    chat.element.scrollIntoView({ block: "nearest" });
    await chat.openThread(threadId);
  }

  /** The assistant's graph drawn in the page (nodes and edges from the server; layout here). */
  async function showGraph(assistant) {
    const name = assistant.name ?? assistant.graph_id;
    graph.hidden = false;
    replace(graph, h("h2", { id: "graph-title" }, `Graph of ${name}`), h("p", { class: "hint" }, "Loading…"));
    try {
      const drawing = await agent(id, "GET", `/assistants/${assistant.assistant_id}/graph`);
      replace(
        graph,
        h(
          "div",
          { class: "heading" },
          h("h2", { id: "graph-title" }, `Graph of ${name}`),
          h("button", { type: "button", class: "small", onclick: () => (graph.hidden = true) }, "Close graph"),
        ),
        h("p", { class: "hint" }, "Dashed edges are conditional: the graph picks one of them at run time."),
        // Focusable: a wide graph scrolls sideways, and a keyboard must be able to scroll it.
        h(
          "div",
          { class: "scroll", tabindex: "0", role: "group", "aria-label": `Drawing of ${name}` },
          graphDrawing(drawing, `Graph of ${name}: ${drawing.nodes?.length ?? 0} nodes, ${drawing.edges?.length ?? 0} edges`),
        ),
        h("details", {}, h("summary", {}, "Edges as text"), edgeList(drawing)),
      );
    } catch (failure) {
      replace(
        graph,
        h("h2", { id: "graph-title" }, `Graph of ${name}`),
        h("p", { class: "error", role: "alert" }, `The graph could not be read: ${failure.message}`),
      );
    }
    graph.scrollIntoView({ block: "nearest" });
  }

  async function showState(thread) {
    const [current, history] = await Promise.all([
      agent(id, "GET", `/threads/${thread.thread_id}/state`),
      agent(id, "POST", `/threads/${thread.thread_id}/history`, { limit: 10 }),
    ]);
    state.textContent = `Thread ${thread.thread_id} (${thread.status}), ${history.length} recent checkpoints\n${JSON.stringify(current.values, null, 2)}`;
  }

  const stop = poll(async (signal) => {
    try {
      if (!assistants.children.length) await loadAssistants();
      await refreshThreads();
      await runs.refresh();
      error.textContent = "";
      if (!signal.aborted) main.dataset.ready = "true";
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
