/**
 * Error bodies quote what the client sent (`Graph "<graph_id>" not found`, a `loc` naming
 * an unknown key). A megabyte of input must not come back as a megabyte of error: every
 * echoed value is cut here, once, on its way out (error-handler.ts), not in each service.
 */

/** The most of one echoed value an error body repeats. */
export const MAX_ECHO = 200;
/** The most an error message may be in all (several values, or one with spaces in it). */
export const MAX_MESSAGE = 2000;

const ELLIPSIS = "…";
const LONG_WORD = new RegExp(`[^\\s"'\`]{${MAX_ECHO + 1},}`, "gu");

/**
 * `text` with every run of more than MAX_ECHO characters without a space or quote (an
 * id, a key, a URL) cut to its first MAX_ECHO characters and an ellipsis; a message still
 * longer than MAX_MESSAGE keeps its head and its tail (where "not found" usually is).
 */
export function clipEchoes(text: string): string {
  const cut = text.replace(LONG_WORD, (word) => cutAt(word, MAX_ECHO) + ELLIPSIS);
  if (cut.length <= MAX_MESSAGE) return cut;
  const tail = tailOf(cut, MAX_ECHO);
  return cutAt(cut, MAX_MESSAGE - tail.length - 1) + ELLIPSIS + tail;
}

/** A `loc` path with each segment clipped (a key may be a megabyte long). */
export function clipLoc(loc: (string | number)[]): (string | number)[] {
  return loc.map((part) => (typeof part === "string" && part.length > MAX_ECHO ? cutAt(part, MAX_ECHO) + ELLIPSIS : part));
}

/** The last `n` UTF-16 units of `text`, one fewer if that would split a surrogate pair. */
function tailOf(text: string, n: number): string {
  const code = text.charCodeAt(text.length - n);
  return text.slice(code >= 0xdc00 && code <= 0xdfff ? text.length - n + 1 : text.length - n);
}

/** The first `n` UTF-16 units of `text`, one fewer if that would split a surrogate pair. */
function cutAt(text: string, n: number): string {
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}
