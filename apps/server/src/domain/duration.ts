/** Units of time in milliseconds: the one definition (every `*_at` and `*_MS` is in milliseconds). */
export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/**
 * Durations in configuration: a number with a unit, `ms`, `s`, `m`, `h` or `d`.
 * @example parseDurationMs('90s') // 90_000
 */
const UNITS: Record<string, number> = { ms: 1, s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS };

export function parseDurationMs(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text);
  if (!match) return null;
  const ms = Number(match[1]) * UNITS[match[2]!]!;
  return Number.isFinite(ms) ? Math.round(ms) : null;
}
