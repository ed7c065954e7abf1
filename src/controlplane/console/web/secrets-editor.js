import { h } from "./dom.js";

/**
 * Rows of name = value for a deployment's environment. Values go to the API as secrets
 * (the vendor's only kind of deployment environment) and are never shown back.
 */
export function secretsEditor(idPrefix) {
  const rows = h("div", { class: "secrets" });
  let count = 0;
  function addRow() {
    const n = count++;
    const name = h("input", { id: `${idPrefix}-name-${n}`, class: "secret-name", placeholder: "NAME", autocomplete: "off", spellcheck: "false" });
    const value = h("input", { id: `${idPrefix}-value-${n}`, class: "secret-value", type: "password", autocomplete: "new-password" });
    const row = h(
      "div",
      { class: "secret-row" },
      h("label", { for: name.id, class: "visually-hidden" }, `Variable ${n + 1} name`),
      name,
      h("label", { for: value.id, class: "visually-hidden" }, `Variable ${n + 1} value`),
      value,
      h("button", { type: "button", class: "small", "aria-label": `Remove variable ${n + 1}`, onclick: () => row.remove() }, "Remove"),
    );
    rows.append(row);
    return name;
  }
  const element = h(
    "fieldset",
    {},
    h("legend", {}, "Environment and secrets"),
    h("p", { class: "hint" }, "Values are stored encrypted and never shown again."),
    rows,
    h("button", { type: "button", class: "small", onclick: () => addRow().focus() }, "Add variable"),
  );
  return {
    element,
    /** [{name, value}] of the filled rows. */
    values() {
      return [...rows.querySelectorAll(".secret-row")]
        .map((row) => ({ name: row.querySelector(".secret-name").value.trim(), value: row.querySelector(".secret-value").value }))
        .filter((secret) => secret.name);
    },
  };
}
