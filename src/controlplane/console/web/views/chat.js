import { agent } from "../api.js";
import { badge, h, replace } from "../dom.js";
import { events } from "../sse.js";

/**
 * A chat with one of the deployment's assistants: the answer streams token by token
 * (stream mode `messages-tuple`), tool calls are listed as they come, and Stop cancels the
 * run on the server (POST /threads/{id}/runs/{run_id}/cancel), not only this request.
 */
export function chatPlayground(deploymentId, { onRunEnded }) {
  const assistant = h("select", { id: "chat-assistant" });
  const transcript = h("div", { id: "transcript", class: "transcript", role: "log", "aria-live": "polite", "aria-label": "Conversation" });
  const input = h("textarea", { id: "chat-input", rows: 3, placeholder: "Say something to the agent" });
  const send = h("button", { type: "submit", id: "chat-send" }, "Send");
  const stopButton = h("button", { type: "button", id: "chat-stop", class: "destructive", disabled: true, onclick: () => stopRun() }, "Stop");
  const threadLabel = h("p", { class: "hint", id: "chat-thread" }, "A new thread starts with the first message.");
  const runStatus = h("span", { id: "run-status" });
  let threadId;
  let running;

  const element = h(
    "section",
    { class: "card chat", "aria-labelledby": "chat-title" },
    h("div", { class: "heading" }, h("h2", { id: "chat-title" }, "Chat"), h("button", { type: "button", class: "small", onclick: () => openThread(undefined) }, "New thread")),
    h("label", { for: "chat-assistant" }, "Assistant"),
    assistant,
    threadLabel,
    transcript,
    h(
      "form",
      { onsubmit: (event) => { event.preventDefault(); start(); } },
      h("label", { for: "chat-input" }, "Message"),
      input,
      h("div", { class: "row" }, send, stopButton, runStatus),
    ),
  );
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      start();
    }
  });

  function bubble(role, text = "") {
    const body = h("div", { class: "text" }, text);
    const item = h("div", { class: `message ${role}` }, h("span", { class: "who" }, role === "human" ? "You" : role === "ai" ? "Agent" : role), body);
    transcript.append(item);
    transcript.scrollTop = transcript.scrollHeight;
    return body;
  }

  async function openThread(id) {
    threadId = id;
    transcript.replaceChildren();
    threadLabel.textContent = id ? `Thread ${id}` : "A new thread starts with the first message.";
    if (!id) return;
    const state = await agent(deploymentId, "GET", `/threads/${id}/state`);
    for (const message of state.values?.messages ?? []) bubble(message.type === "human" ? "human" : message.type === "ai" ? "ai" : message.type, textOf(message.content));
  }

  async function start() {
    const text = input.value;
    if (!text.trim() || running) return;
    input.value = "";
    bubble("human", text);
    const controller = new AbortController();
    running = { controller, runId: undefined };
    send.disabled = true;
    stopButton.disabled = false;
    replace(runStatus, badge("running"));
    const answers = new Map();
    try {
      if (!threadId) {
        const thread = await agent(deploymentId, "POST", "/threads", { metadata: { graph_id: selectedGraph() } });
        threadId = thread.thread_id;
        threadLabel.textContent = `Thread ${threadId}`;
      }
      const response = await agent(
        deploymentId,
        "POST",
        `/threads/${threadId}/runs/stream`,
        { assistant_id: assistant.value, input: { messages: [{ type: "human", content: text }] }, stream_mode: ["messages-tuple"], on_disconnect: "cancel" },
        { raw: true, signal: controller.signal },
      );
      for await (const { event, data } of events(response)) {
        if (event === "metadata") running.runId = data.run_id;
        else if (event === "messages") show(answers, data);
        else if (event === "error") bubble("error", `${data?.error ?? "Error"}: ${data?.message ?? ""}`);
      }
      replace(runStatus, badge(running.cancelled ? "interrupted" : "success"));
    } catch (error) {
      if (running?.cancelled) replace(runStatus, badge("interrupted"));
      else {
        bubble("error", error.message);
        replace(runStatus, badge("error"));
      }
    } finally {
      running = undefined;
      send.disabled = false;
      stopButton.disabled = true;
      onRunEnded?.();
    }
  }

  /** One `messages` event: [chunk, metadata]; chunks of one message id grow one bubble. */
  function show(answers, data) {
    const [chunk] = Array.isArray(data) ? data : [data];
    if (!chunk || (chunk.type !== "AIMessageChunk" && chunk.type !== "ai" && chunk.type !== "tool")) return;
    const key = chunk.id ?? "answer";
    let body = answers.get(key);
    if (!body) answers.set(key, (body = bubble(chunk.type === "tool" ? "tool" : "ai")));
    const text = textOf(chunk.content);
    if (text) body.append(text);
    for (const call of chunk.tool_call_chunks ?? chunk.tool_calls ?? []) {
      body.append(h("div", { class: "tool-call" }, `tool call ${call.name ?? ""}(${typeof call.args === "string" ? call.args : JSON.stringify(call.args ?? {})})`));
    }
    transcript.scrollTop = transcript.scrollHeight;
  }

  async function stopRun() {
    if (!running) return;
    running.cancelled = true;
    stopButton.disabled = true;
    const { runId, controller } = running;
    try {
      if (runId) await agent(deploymentId, "POST", `/threads/${threadId}/runs/${runId}/cancel?action=interrupt`);
    } finally {
      controller.abort();
    }
  }

  function selectedGraph() {
    return assistant.selectedOptions[0]?.dataset.graph;
  }

  return {
    element,
    setAssistants(list) {
      const current = assistant.value;
      replace(assistant, list.map((a) => h("option", { value: a.assistant_id, "data-graph": a.graph_id }, `${a.name ?? a.graph_id} (${a.graph_id})`)));
      if (current) assistant.value = current;
    },
    openThread,
    stop() {
      running?.controller.abort();
    },
  };
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((block) => (typeof block === "string" ? block : block?.text ?? "")).join("");
  return "";
}
