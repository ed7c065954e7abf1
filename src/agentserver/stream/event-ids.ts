/**
 * Event ids on the wire count from 0, as the vendor's servers number them; the broker
 * and run_events count from 1 (0 there means "nothing yet"). These two convert at the
 * edge, so that a client resuming after id n gets what follows stored id n + 1.
 */
export function wireEventId(storedId: number): number {
  return storedId - 1;
}

/** The stored id after which to resume, for a client's Last-Event-ID (`-1`: from the start). */
export function storedEventId(lastEventId: number): number {
  return Math.max(0, lastEventId + 1);
}
