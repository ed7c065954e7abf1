/**
 * The relay's messages between agent servers (relay.ts), one NOTIFY payload each. Keys
 * are one letter to keep payloads small. `s` is the sender, `r` the run, `t` the attempt
 * the message is about; event ids (`a`, `i`) count within that attempt.
 */
export type RelayMessage = WantMessage | EventMessage | PartMessage | EndMessage | HereMessage;

/** A follower asks for the run's events after the last one it holds. */
export interface WantMessage {
  k: "w";
  s: string;
  r: string;
  t: number;
  /** The last event the asker holds (0: none). */
  a: number;
}

/** One event, whole. */
export interface EventMessage {
  k: "e";
  s: string;
  r: string;
  t: number;
  i: number;
  e: string;
  d: unknown;
}

/** The attempt ended here. */
export interface EndMessage {
  k: "x";
  s: string;
  r: string;
  t: number;
  /** The run ended; false: it went back to the queue and goes on elsewhere. */
  f: boolean;
}

/** Answer to an ask when the run executes here and there is nothing new to send. */
export interface HereMessage {
  k: "h";
  s: string;
  r: string;
  t: number;
}

/** A piece of an event too large for one payload. */
export interface PartMessage {
  k: "p";
  s: string;
  r: string;
  t: number;
  i: number;
  /** Number of parts, this part's index, and its text. */
  n: number;
  j: number;
  c: string;
}

/** Characters per NOTIFY payload: at most 3 bytes each in UTF-8, well under the 8000-byte limit. */
export const PART_CHARS = 2_400;

/** The payloads of one event: the event whole, or in parts when it is too large. */
export function eventPayloads(sender: string, runId: string, attempt: number, id: number, event: string, data: unknown): string[] {
  const whole = JSON.stringify({ k: "e", s: sender, r: runId, t: attempt, i: id, e: event, d: data } satisfies EventMessage);
  if (whole.length <= PART_CHARS) return [whole];
  const pieces = splitText(JSON.stringify({ e: event, d: data }), PART_CHARS);
  return pieces.map((piece, index) =>
    JSON.stringify({ k: "p", s: sender, r: runId, t: attempt, i: id, n: pieces.length, j: index, c: piece } satisfies PartMessage),
  );
}

/** The event that parts carried, joined in order. */
export function joinParts(pieces: string[]): { event: string; data: unknown } {
  const { e, d } = JSON.parse(pieces.join("")) as { e: string; d: unknown };
  return { event: e, data: d };
}

/** A message read from a payload; undefined for anything that is not one (ignored). */
export function readRelayMessage(payload: string): RelayMessage | undefined {
  let message: unknown;
  try {
    message = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof message !== "object" || message === null) return undefined;
  const { k, r, s, t } = message as Partial<RelayMessage>;
  if (typeof r !== "string" || typeof s !== "string" || typeof t !== "number") return undefined;
  return k === "w" || k === "e" || k === "p" || k === "x" || k === "h" ? (message as RelayMessage) : undefined;
}

/** Cuts text into pieces of at most `size` UTF-16 units, never inside a surrogate pair. */
export function splitText(text: string, size: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
