import { api } from "../api.js";
import { h, toast } from "../dom.js";

/** Asks for the name of what is deleted (a deployment, an integration…); resolves true only when it was typed exactly. */
export function confirmDelete(name, kind = "deployment") {
  return new Promise((resolve) => {
    const input = h("input", { id: "confirm-name", autocomplete: "off", spellcheck: "false" });
    const confirm = h("button", { type: "submit", class: "destructive", disabled: true }, "Delete");
    const dialog = h(
      "dialog",
      { "aria-labelledby": "confirm-title", class: "card" },
      h(
        "form",
        {
          method: "dialog",
          onsubmit: (event) => {
            event.preventDefault();
            close(input.value === name);
          },
        },
        h("h2", { id: "confirm-title" }, `Delete this ${kind}?`),
        h("p", {}, "Type its name to confirm: ", h("strong", { class: "confirm-name" }, name)),
        h("label", { for: "confirm-name" }, `${kind[0].toUpperCase()}${kind.slice(1)} name`),
        input,
        h("div", { class: "row" }, h("button", { type: "button", onclick: () => close(false) }, "Cancel"), confirm),
      ),
    );
    input.addEventListener("input", () => (confirm.disabled = input.value !== name));
    dialog.addEventListener("cancel", () => close(false));
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
    function close(result) {
      dialog.close();
      dialog.remove();
      resolve(result);
    }
  });
}

/** Deletes `path` once `name` was typed in the dialog, says so, and calls `then` (a reload of the list). */
export async function deleteAfterConfirm(name, kind, path, then) {
  if (!(await confirmDelete(name, kind))) return;
  try {
    await api("DELETE", path);
    toast(`Deleted ${name}`);
    await then();
  } catch (failure) {
    toast(`Not deleted: ${failure.message}`);
  }
}
