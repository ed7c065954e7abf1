/**
 * `node_version` of langgraph.json against the Node.js that runs the server.
 *
 * The vendor accepts a major only ("20", "22", "24"; at least 20) and builds an image
 * with that Node. We cannot switch Node under a running project, so we refuse to start
 * on another major instead of running the project on a Node it did not ask for.
 * - "22" or 22: the running major must be 22.
 * - "20.19" or "20.19.1": a minimum within a major (our extension; the vendor refuses
 *   dots): the running major must be 20 and the version at least 20.19(.1).
 * - anything else (">=20", "^20", "20.x", "lts") is refused: a range says neither
 *   which Node to build with nor which one the project was tried on.
 */
const MIN_NODE_MAJOR = 20;

/** A problem to report, or undefined when `running` satisfies `wanted` (or none is asked). */
export function nodeVersionProblem(wanted: unknown, running: string = process.versions.node): string | undefined {
  if (wanted === undefined || wanted === null) return undefined;
  const text = typeof wanted === "number" ? String(wanted) : typeof wanted === "string" ? wanted.trim() : undefined;
  const match = text === undefined ? null : /^(\d+)(?:\.(\d+)(?:\.(\d+))?)?$/.exec(text);
  if (!match) {
    return `must be a major version such as "${MIN_NODE_MAJOR}" (or a minimum within a major, such as "20.19"), not ${JSON.stringify(wanted)}`;
  }
  const want = match.slice(1).map((part) => (part === undefined ? undefined : Number(part)));
  if (want[0]! < MIN_NODE_MAJOR) return `Node ${text} is not supported: the minimum is ${MIN_NODE_MAJOR}`;
  const have = running.replace(/^v/, "").split(".").map(Number);
  const fix = `run Slipway with Node ${text}${want[1] === undefined ? "" : " or a later " + want[0] + ".x"}, or set "node_version": "${have[0]}" if the project works on it`;
  if (have[0] !== want[0]) return `the project asks for Node ${text} but this server runs Node ${running}: ${fix}`;
  for (let i = 1; i < 3; i++) {
    const w = want[i];
    if (w === undefined || have[i] > w) break;
    if (have[i] < w) return `the project asks for Node ${text} or later but this server runs Node ${running}: ${fix}`;
  }
  return undefined;
}
