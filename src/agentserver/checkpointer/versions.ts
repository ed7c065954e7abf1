/**
 * Channel versions for the saver: `<step, 16 digits>.<16 random digits>`.
 *
 * Channel values are stored once per (channel, version) and shared by every
 * checkpoint of the thread that holds that version. With LangGraph's default
 * integer versions, two branches of one thread (a run from an older checkpoint,
 * an update_state in the past) both produce, say, `messages@7` with different
 * contents, and the second branch would read the first one's value. A random
 * suffix makes every new version unique, as the Python PostgresSaver does.
 *
 * The fixed-width step keeps the order LangGraph needs: it compares versions with
 * `>` and `localeCompare`, which agree on equal-length digit strings. Integer
 * versions (from a thread written by another saver) are read as step numbers.
 */
const STEP_DIGITS = 16;

export function nextChannelVersion(current: number | string | undefined, random: () => number = Math.random): string {
  const step = current === undefined ? 0 : stepOf(current);
  const suffix = Math.floor(random() * 1e16)
    .toString()
    .padStart(16, "0");
  return `${String(step + 1).padStart(STEP_DIGITS, "0")}.${suffix}`;
}

function stepOf(version: number | string): number {
  if (typeof version === "number") return Math.trunc(version);
  const step = Number.parseInt(version.split(".")[0] ?? "", 10);
  return Number.isFinite(step) ? step : 0;
}
