/**
 * `node_version` of langgraph.json against the Node.js that runs the project, read the
 * same way by the build (before it installs) and by `slipway agent` (before it starts).
 *
 * The vendor accepts a major only ("20", "22", "24"; at least 20) and builds an image
 * with that Node. We cannot switch Node under a running project, so:
 * - a major below the running one runs, with a warning: Node keeps what older majors
 *   had, and a first deploy of a template that says "20" must not fail on Node 22;
 * - a major above the running one fails: the project may use what that Node added;
 * - "20.19" or "20.19.1" is a minimum within its major (our extension; the vendor
 *   refuses dots): on that major the version must be at least that;
 * - anything else (">=20", "^20", "20.x", "lts") is refused: a range says neither
 *   which Node to build with nor which one the project was tried on.
 */
const MIN_NODE_MAJOR = 20;

export interface NodeVersionCheck {
  /** Why the project must not run on this Node. */
  error?: string;
  /** What to tell while running it anyway. */
  warning?: string;
}

export function checkNodeVersion(wanted: unknown, running: string = process.versions.node): NodeVersionCheck {
  if (wanted === undefined || wanted === null) return {};
  const text = typeof wanted === "number" ? String(wanted) : typeof wanted === "string" ? wanted.trim() : undefined;
  const match = text === undefined ? null : /^(\d+)(?:\.(\d+)(?:\.(\d+))?)?$/.exec(text);
  if (!match) {
    return { error: `must be a major version such as "${MIN_NODE_MAJOR}" (or a minimum within a major, such as "20.19"), not ${JSON.stringify(wanted)}` };
  }
  const want = match.slice(1).map((part) => (part === undefined ? undefined : Number(part)));
  if (want[0]! < MIN_NODE_MAJOR) return { error: `Node ${text} is not supported: the minimum is ${MIN_NODE_MAJOR}` };
  const version = running.replace(/^v/, "");
  const have = version.split(".").map(Number);
  if (want[0]! < have[0]) {
    return {
      warning: `the project asks for Node ${text}; it runs on this server's Node ${version}, a later major (set "node_version": "${have[0]}" to say it is meant to)`,
    };
  }
  if (want[0]! > have[0]) {
    return {
      error:
        `the project asks for Node ${text} but this server runs Node ${version}, an older major: the project may use what Node ${want[0]} added. ` +
        `Run Slipway with Node ${want[0]} or later, or set "node_version": "${have[0]}" if the project works on Node ${have[0]}`,
    };
  }
  for (let i = 1; i < 3; i++) {
    const w = want[i];
    if (w === undefined || have[i] > w) break;
    if (have[i] < w) {
      return {
        error: `the project asks for Node ${text} or later but this server runs Node ${version}: run Slipway with Node ${text} or a later ${want[0]}.x, or set "node_version": "${have[0]}" if the project works on it`,
      };
    }
  }
  return {};
}
