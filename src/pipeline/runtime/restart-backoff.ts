/** Pauses before a replica that died is started again: longer after each crash, up to 30 s. */
const BACKOFF_MS = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

/** When a dead replica (a process or a container) starts again; one per replica. */
export class RestartBackoff {
  private crashes = 0;
  private timer: NodeJS.Timeout | undefined;

  /** The pause before the next restart; counts this crash. */
  next(): number {
    return BACKOFF_MS[Math.min(this.crashes++, BACKOFF_MS.length - 1)];
  }

  /** Calls `restart` after `delayMs`, unless cancelled meanwhile. */
  schedule(delayMs: number, restart: () => void): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      restart();
    }, delayMs);
    this.timer.unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
