import { agent } from "../api.js";
import { badge, h, replace } from "../dom.js";
import { events } from "../sse.js";

/**
 * A chat with one of the deployment's assistants: the answer streams token by token
 * (stream mode `messages-tuple`), tool calls are listed as they come, and Stop cancels the
 * run on the server (POST /threads/{id}/runs/{run_id}/cancel), not only this request.
 * A run that stops at `interrupt()` shows the interrupt's value and a form whose answer
 * resumes it (`command: {resume}`), streamed like any run.
 */
export function chatPlayground(deploymentId, { onRunEnded }) {
  const assistant = h("select", { id: "chat-assistant" });
  const transcript = h("div", { id: "transcript", class: "transcript", role: "log", "aria-live": "polite", "aria-label": "Conversation" });
  const input = h("textarea", { id: "chat-input", rows: 3, placeholder: "Say something to the agent" });
  const send = h("button", { type: "submit", id: "chat-send" }, "Send");
  const stopButton = h("button", { type: "button", id: "chat-stop", class: "destructive", disabled: true, onclick: () => stopRun() }, "Stop");
  const threadLabel = h("p", { class: "hint", id: "chat-thread" }, "A new thread starts with the first message.");
  const runStatus = h("span", { id: "run-status" });
  const resumeInput = h("textarea", { id: "resume-input", rows: 2, "aria-describedby": "resume-hint" });
  const interruptValues = h("div", { id: "interrupt-values" });
  // The interrupt shows while its run's stream is still closing: Resume waits for the run to end.
  const resumeButton = h("button", { type: "submit", id: "resume", disabled: true }, "Resume");
  const interrupt = h(
    "form",
    {
      class: "interrupt",
      id: "interrupt",
      hidden: true,
      "aria-labelledby": "interrupt-title",
      onsubmit: (event) => {
        event.preventDefault();
        resume();
      },
    },
    h("h3", { id: "interrupt-title" }, "The graph is waiting for an answer"),
    interruptValues,
    h("label", { for: "resume-input" }, "Resume value"),
    resumeInput,
    h("p", { class: "hint", id: "resume-hint" }, 'JSON (for example {"approved": true}) or plain text; sent as command.resume.'),
    resumeButton,
  );
  let threadId;
  let running;

  const element = h(
    "section",
    { class: "card chat", "aria-labelledby": "chat-title" },
    h(
      "div",
      { class: "heading" },
      h("h2", { id: "chat-title" }, "Chat"),
      h("button", { type: "button", class: "small", onclick: () => openThread(undefined) }, "New thread"),
    ),
    h("label", { for: "chat-assistant" }, "Assistant"),
    assistant,
    threadLabel,
    transcript,
    interrupt,
    h(
      "form",
      {
        onsubmit: (event) => {
          event.preventDefault();
          start();
        },
      },
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

  /** The tool-call lines shown in each message's body, by call index or id. */
  const toolCalls = new WeakMap();

  function bubble(role, text = "") {
    const body = h("div", { class: "text" }, text);
    const item = h("div", { class: `message ${role}` }, h("span", { class: "who" }, WHO[role] ?? role), body);
    transcript.append(item);
    transcript.scrollTop = transcript.scrollHeight;
    return body;
  }

  async function openThread(id) {
    threadId = id;
    transcript.replaceChildren();
    interrupt.hidden = true;
    threadLabel.textContent = id ? `Thread ${id}` : "A new thread starts with the first message.";
    if (!id) return;
    const state = await agent(deploymentId, "GET", `/threads/${id}/state`);
    for (const message of state.values?.messages ?? [])
      bubble(message.type === "human" ? "human" : message.type === "ai" ? "ai" : message.type, textOf(message.content));
    await checkInterrupts();
  }

  async function start() {
    const text = input.value;
    if (!text.trim() || running) return;
    input.value = "";
    bubble("human", text);
    await run({ input: { messages: [{ type: "human", content: text }] } });
  }

  /** Resumes the interrupted thread with the form's value: JSON when it parses, else the text as it is. */
  async function resume() {
    const text = resumeInput.value;
    if (running || !threadId) return;
    const value = parseResume(text);
    resumeInput.value = "";
    interrupt.hidden = true;
    bubble("resume", typeof value === "string" ? value : JSON.stringify(value));
    await run({ command: { resume: value } });
  }

  /** One run on the thread (made first if needed), its stream shown as it comes. */
  async function run(body) {
    const controller = new AbortController();
    running = { controller, runId: undefined };
    send.disabled = true;
    resumeButton.disabled = true;
    stopButton.disabled = false;
    interrupt.hidden = true;
    replace(runStatus, badge("running"));
    const answers = new Map();
    const streamedNodes = new Set();
    let interrupted = false;
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
        { assistant_id: assistant.value, ...body, stream_mode: ["messages-tuple", "updates"], on_disconnect: "cancel" },
        { raw: true, signal: controller.signal },
      );
      for await (const { event, data } of events(response)) {
        if (event === "metadata") running.runId = data.run_id;
        else if (event === "messages") show(answers, data, streamedNodes);
        else if ((event === "updates" || event === "values") && data?.__interrupt__) interrupted = showInterrupts(data.__interrupt__) || interrupted;
        else if (event === "updates") showUnstreamed(data, streamedNodes);
        else if (event === "error") bubble("error", `${data?.error ?? "Error"}: ${data?.message ?? ""}`);
      }
      // The thread's state is the authority: an interrupt the stream did not carry shows too.
      if (!running.cancelled) interrupted = (await checkInterrupts()) || interrupted;
      replace(runStatus, badge(running.cancelled || interrupted ? "interrupted" : "success"));
    } catch (error) {
      if (running?.cancelled) replace(runStatus, badge("interrupted"));
      else {
        bubble("error", error.message);
        replace(runStatus, badge("error"));
      }
    } finally {
      running = undefined;
      send.disabled = false;
      resumeButton.disabled = false;
      stopButton.disabled = true;
      onRunEnded?.();
    }
  }

  /** Reads the thread's pending interrupts (`interrupts`, or each task's) and shows them; true when any. */
  async function checkInterrupts() {
    if (!threadId) return false;
    const state = await agent(deploymentId, "GET", `/threads/${threadId}/state`);
    const pending = Array.isArray(state.interrupts) ? state.interrupts : (state.tasks ?? []).flatMap((task) => task.interrupts ?? []);
    return showInterrupts(pending);
  }

  /** The interrupts' values, as text, above a form that resumes the run. */
  function showInterrupts(list) {
    const pending = Array.isArray(list) ? list : [];
    interrupt.hidden = pending.length === 0;
    replace(
      interruptValues,
      pending.map((item) => [
        h(
          "pre",
          { class: "interrupt-value", tabindex: "0", "aria-label": "Interrupt value" },
          typeof item?.value === "string" ? item.value : JSON.stringify(item?.value ?? null, null, 2),
        ),
        // Several at once are resumed with {"<id>": value, …}: their ids are shown for that.
        pending.length > 1 && item?.id ? h("p", { class: "hint" }, `Interrupt id ${item.id}`) : null,
      ]),
    );
    return pending.length > 0;
  }

  /** One `messages` event: [chunk, metadata]; chunks of one message id grow one bubble. */
  function show(answers, data, streamedNodes) {
    const [chunk, metadata] = Array.isArray(data) ? data : [data];
    if (metadata?.langgraph_node) streamedNodes.add(metadata.langgraph_node);
    if (!chunk || (chunk.type !== "AIMessageChunk" && chunk.type !== "ai" && chunk.type !== "tool")) return;
    const key = chunk.id ?? "answer";
    let body = answers.get(key);
    if (!body) answers.set(key, (body = bubble(chunk.type === "tool" ? "tool" : "ai")));
    const text = textOf(chunk.content);
    if (text) body.append(text);
    showToolCalls(body, chunk);
    transcript.scrollTop = transcript.scrollHeight;
  }

  /**
   * A message's tool calls, one line each: streamed chunks (`tool_call_chunks`, the
   * arguments arriving as pieces of JSON text) grow their call's line; a whole message's
   * `tool_calls` (arguments as an object) write it once.
   */
  function showToolCalls(body, chunk) {
    const pieces = Array.isArray(chunk.tool_call_chunks) && chunk.tool_call_chunks.length ? chunk.tool_call_chunks : null;
    const calls = pieces ?? (Array.isArray(chunk.tool_calls) ? chunk.tool_calls : []);
    let known = toolCalls.get(body);
    if (!known) toolCalls.set(body, (known = new Map()));
    calls.forEach((call, position) => {
      const key = String(call.index ?? call.id ?? position);
      let line = known.get(key);
      if (!line) {
        line = { name: "", args: "", element: h("div", { class: "tool-call" }) };
        known.set(key, line);
        body.append(line.element);
      }
      if (call.name) line.name = pieces ? line.name + call.name : call.name;
      const args = typeof call.args === "string" ? call.args : JSON.stringify(call.args ?? {});
      line.args = pieces ? line.args + args : args;
      line.element.textContent = `tool call ${line.name}(${line.args})`;
    });
  }

  /**
   * An `updates` event: the AI messages a node returned without a chat model streaming them
   * (a node that writes its answer itself, as after a resume), shown whole. A node whose
   * tokens came as `messages` is skipped: its answer is already on screen.
   */
  function showUnstreamed(data, streamedNodes) {
    for (const [node, update] of Object.entries(data ?? {})) {
      if (streamedNodes.has(node) || !update || typeof update !== "object") continue;
      const list = Array.isArray(update.messages) ? update.messages : update.messages ? [update.messages] : [];
      for (const message of list) {
        const fields = message?.kwargs ?? message;
        const ai = fields?.type === "ai" || fields?.role === "ai" || fields?.role === "assistant";
        if (ai) bubble("ai", textOf(fields.content));
      }
    }
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
      replace(
        assistant,
        list.map((a) => h("option", { value: a.assistant_id, "data-graph": a.graph_id }, `${a.name ?? a.graph_id} (${a.graph_id})`)),
      );
      if (current) assistant.value = current;
    },
    openThread,
    stop() {
      running?.controller.abort();
    },
  };
}

const WHO = { human: "You", ai: "Agent", tool: "Tool", resume: "You resumed with" };

/** A resume value as typed: JSON when it parses (an object, a number, true), else the text itself. */
export function parseResume(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((block) => (typeof block === "string" ? block : (block?.text ?? ""))).join("");
  return "";
}
