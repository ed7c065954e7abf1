// Calls `tick` now and then every `ms` until stopped; a failed tick is shown by the
// connection banner (api.js) and retried on the next one.

export function poll(tick, ms) {
  let stopped = false;
  let timer;
  async function run() {
    try {
      await tick();
    } catch (error) {
      if (error?.status === 401) location.reload();
    }
    if (!stopped) timer = setTimeout(run, ms);
  }
  run();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
