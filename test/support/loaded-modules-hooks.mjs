// The load hook of loaded-modules.mjs: reports every ES module's URL to the main thread.
let port;

export function initialize(data) {
  port = data.port;
}

export async function load(url, context, next) {
  port.postMessage(url);
  return next(url, context);
}
