/**
 * Durations in configuration: a number with a unit, `ms`, `s`, `m`, `h` or `d`.
 * @example parseDurationMs('90s') // 90_000
 */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDurationMs(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text);
  if (!match) return null;
  const ms = Number(match[1]) * UNITS[match[2]!]!;
  return Number.isFinite(ms) ? Math.round(ms) : null;
}
