// Calls to the control plane (under /api-host when the console was opened there) and to a
// deployment's agent server (at /deployments/<id>, the router on the same port). The API
// key lives in this tab's sessionStorage only: closing the tab forgets it.

const SESSION = "slipway.console.session";
const BASE = location.pathname.startsWith("/api-host") ? "/api-host" : "";

export function session() {
  try {
    return JSON.parse(sessionStorage.getItem(SESSION) ?? "null");
  } catch {
    return null;
  }
}

export function saveSession(value) {
  sessionStorage.setItem(SESSION, JSON.stringify(value));
}

export function signOut() {
  sessionStorage.removeItem(SESSION);
}

/** An answer other than 2xx, with the server's own words (FastAPI's `detail`). */
export class ApiError extends Error {
  constructor(status, detail) {
    super(describe(status, detail));
    this.status = status;
  }
}

function describe(status, detail) {
  if (Array.isArray(detail)) {
    return detail.map((problem) => `${(problem.loc ?? []).slice(1).join(".") || "request"}: ${problem.msg}`).join("; ");
  }
  if (typeof detail === "string" && detail) return detail;
  return `the server answered ${status}`;
}

/** Shows a banner while the server cannot be reached; hides it on the next answer. */
function connection(lost) {
  const banner = document.getElementById("connection");
  if (!banner) return;
  banner.hidden = !lost;
  banner.textContent = lost ? "Connection to the server lost: reconnecting…" : "";
}

async function call(url, { method = "GET", body, headers = {}, signal, raw = false } = {}) {
  let response;
  try {
    response = await fetch(url, {
      method,
      headers: { ...headers, ...(body !== undefined && !(body instanceof Blob) ? { "content-type": "application/json" } : {}) },
      body: body === undefined ? undefined : body instanceof Blob ? body : JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (error.name !== "AbortError") connection(true);
    throw error;
  }
  connection(false);
  if (raw && response.ok) return response;
  const text = await response.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  if (!response.ok) throw new ApiError(response.status, parsed?.detail ?? parsed);
  return parsed;
}

function keyHeaders(current = session()) {
  if (!current) throw new ApiError(401, "You are signed out.");
  return { "x-api-key": current.key, ...(current.workspaceId ? { "x-tenant-id": current.workspaceId } : {}) };
}

/** A control-plane call with the session's key and workspace. */
export function api(method, path, body, options = {}) {
  return call(BASE + path, { method, body, ...options, headers: { ...keyHeaders(), ...options.headers } });
}

/** The workspaces a key reaches (no workspace needed yet): the sign-in check. */
export function workspacesFor(key) {
  return call(`${BASE}/v2/workspaces`, { headers: { "x-api-key": key } });
}

/** A PUT of the project's archive to the upload URL the API answered (signed; no key). */
export function putUpload(uploadUrl, blob) {
  const url = new URL(uploadUrl, location.href);
  // The URL names the server's public address; the same path on this origin is the same route.
  return call(BASE + url.pathname + url.search, { method: "PUT", body: blob, headers: { "content-type": "application/gzip" } });
}

/** A call to a deployment's agent server, through the router on this port. */
export function agent(deploymentId, method, path, body, options = {}) {
  const { "x-api-key": key } = keyHeaders();
  return call(`/deployments/${encodeURIComponent(deploymentId)}${path}`, { method, body, ...options, headers: { "x-api-key": key, ...options.headers } });
}
