// Building the page without HTML strings: every text goes in as a text node, so a
// deployment name, a log line or a model's answer can never become markup.

/** An element with attributes, event handlers (functions under "on…") and children (nodes or text). */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name === "class") el.className = value;
    else if (name === "href") el.setAttribute("href", safeHref(value));
    else if (name.startsWith("on")) throw new Error(`handler ${name} must be a function`);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/** Appends children: nodes as they are, anything else as text (never parsed). */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

const drawnRows = new WeakMap();

/**
 * Makes `body`'s rows those of `items`, in order, drawing a row again only when its item
 * changed (by its JSON): a row that stays keeps its focus, its opened <details> and any
 * text selected in it across a view's refreshes. Rows are moved only when out of order.
 */
export function syncRows(body, items, keyOf, render) {
  let known = drawnRows.get(body);
  if (!known) drawnRows.set(body, (known = new Map()));
  const rows = items.map((item) => {
    const key = keyOf(item);
    const signature = JSON.stringify(item);
    const old = known.get(key);
    if (old?.signature === signature && old.row.parentNode === body) return old.row;
    const row = render(item);
    known.set(key, { signature, row });
    return row;
  });
  const keep = new Set(rows);
  for (const child of [...body.children]) if (!keep.has(child)) child.remove();
  rows.forEach((row, index) => {
    if (body.children[index] !== row) body.insertBefore(row, body.children[index] ?? null);
  });
  for (const [key, { row }] of known) if (row.parentNode !== body) known.delete(key);
}

/** Replaces an element's content. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** Links stay inside the console (#/…, /…) or go to http(s): a `javascript:` URL becomes "#". */
export function safeHref(value) {
  const text = String(value);
  if (text.startsWith("#") || (text.startsWith("/") && !text.startsWith("//"))) return text;
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : "#";
  } catch {
    return "#";
  }
}

/** A short message at the bottom of the screen, read out by screen readers. */
export function toast(message) {
  const box = document.getElementById("toast");
  box.textContent = message;
  box.classList.add("shown");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => box.classList.remove("shown"), 3000);
}

/** A status as a coloured badge (the colour comes from its class, the text says it). */
export function badge(status) {
  const text = String(status ?? "UNKNOWN");
  const tone = /FAILED|ERROR|error|timeout/.test(text)
    ? "bad"
    : /DEPLOYED|READY|success|idle/.test(text)
      ? "good"
      : /INTERRUPTED|SKIPPED|interrupted|UNUSED/.test(text)
        ? "muted"
        : "busy";
  return h("span", { class: `badge ${tone}` }, text);
}

/** Copies text to the clipboard, with a button that says so (`shown` is its visible word, if shorter than `label`). */
export function copyButton(text, label = "Copy", shown = label) {
  return h(
    "button",
    {
      type: "button",
      class: "small",
      "aria-label": `${label}: ${text}`,
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(text);
          toast("Copied");
        } catch {
          toast("Copying was refused by the browser: select the text instead");
        }
      },
    },
    shown,
  );
}

/** An id as its first 8 characters, the whole id in its tooltip and on a copy button. */
export function idCell(id, kind) {
  return h("span", { class: "id" }, h("code", { title: id }, id.slice(0, 8)), " ", copyButton(id, `Copy ${kind} id`, "Copy"));
}
