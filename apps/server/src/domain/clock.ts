/**
 * Time is injected everywhere (retention, leases, grace periods, token expiry) so tests move it
 * instead of sleeping. All times are Unix epoch milliseconds.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface ManualClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

/** @example const clock = createManualClock(Date.UTC(2026, 0, 1)); clock.advance(60_000); */
export function createManualClock(startMs: number): ManualClock {
  let current = startMs;
  return {
    now: () => current,
    set: (ms) => {
      current = ms;
    },
    advance: (ms) => {
      current += ms;
    },
  };
}
