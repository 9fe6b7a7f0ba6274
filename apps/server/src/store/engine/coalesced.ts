/**
 * One call of `run` at a time, shared by every caller that asks while it is idle or under way.
 * The promise a caller gets resolves after a run that *started after* the call: a run already
 * under way may have begun before whatever the caller wants covered (a COMMIT to flush, an event
 * to announce), so callers arriving meanwhile share the next run instead. Under load that is at
 * most one run in flight and one waiting, however many callers there are.
 */
export function coalesced(run: () => Promise<void>): () => Promise<void> {
  let inFlight: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const call = (): Promise<void> => {
    if (!inFlight) {
      inFlight = run().finally(() => {
        inFlight = null;
      });
      return inFlight;
    }
    const again = () => {
      next = null;
      return call();
    };
    next ??= inFlight.then(again, again);
    return next;
  };
  return call;
}
