// Calls `tick` now and then every `ms` until stopped; a failed tick is shown by the
// connection banner (api.js) and retried on the next one. Each tick gets a signal that
// aborts when the view stops: a tick still waiting for the server when the user has moved
// on must not write into the next page (its calls pass the signal, and it checks it).

export function poll(tick, ms) {
  const controller = new AbortController();
  let timer;
  async function run() {
    try {
      await tick(controller.signal);
    } catch (error) {
      if (error?.status === 401 && !controller.signal.aborted) location.reload();
    }
    if (!controller.signal.aborted) timer = setTimeout(run, ms);
  }
  run();
  return () => {
    controller.abort();
    clearTimeout(timer);
  };
}
