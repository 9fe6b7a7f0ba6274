/** Where the simulator reads the time: token expiry, JWT checks and every timestamp it writes. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Seconds since the epoch, as JWT claims count time. */
export function epochSeconds(clock: Clock): number {
  return Math.floor(clock.now().getTime() / 1000);
}

/**
 * GitHub's timestamp format: ISO 8601 in UTC without milliseconds, e.g. `2021-12-16T19:37:22Z`.
 *
 * @example toGitHubTimestamp(new Date(0)) // '1970-01-01T00:00:00Z'
 */
export function toGitHubTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
