import { h } from "./dom.js";

/** Rows per page of the threads and runs lists. */
export const PAGE_SIZE = 50;

/**
 * Pages of a list the agent API serves with `limit` and `offset`: a view asks for one row
 * more than a page (`query()`), so whether an older page exists needs no count, and shows
 * what `shown(list)` keeps. Refreshes stay on the page the user chose; "Newer" and
 * "Older" move by a page and call `onMove`.
 */
export function pager(label, onMove) {
  let offset = 0;
  const status = h("span", { class: "hint", "aria-live": "polite" });
  const newer = h("button", { type: "button", class: "small", disabled: true, onclick: () => move(-PAGE_SIZE) }, `Newer ${label}`);
  const older = h("button", { type: "button", class: "small", disabled: true, onclick: () => move(PAGE_SIZE) }, `Older ${label}`);
  const element = h("div", { class: "pager", hidden: true }, newer, older, status);

  function move(by) {
    offset = Math.max(0, offset + by);
    onMove();
  }

  return {
    element,
    query: () => ({ limit: PAGE_SIZE + 1, offset }),
    /**
     * The rows of this page from the answer to `asked` (what `query()` gave), or undefined
     * when the user moved meanwhile (the answer is for another page: draw nothing). Sets
     * the buttons and the "51–100" note.
     */
    shown(list, asked) {
      if (asked.offset !== offset) return undefined;
      // The page emptied (rows deleted meanwhile): the caller asks again from the start.
      if (!list.length && offset > 0) {
        offset = 0;
        onMove();
        return undefined;
      }
      const rows = list.slice(0, PAGE_SIZE);
      const more = list.length > PAGE_SIZE;
      const focused = document.activeElement;
      newer.disabled = offset === 0;
      older.disabled = !more;
      // A button that just went disabled drops the keyboard's focus: hand it to the other.
      if (focused?.disabled) (focused === older ? newer : older).focus();
      element.hidden = offset === 0 && !more;
      status.textContent = rows.length ? `${label[0].toUpperCase()}${label.slice(1)} ${offset + 1}–${offset + rows.length}` : "";
      return rows;
    },
    reset() {
      offset = 0;
      element.hidden = true;
    },
  };
}
