import { describe, expect, it } from 'vitest';
import { usageDay } from './usage.js';

describe('usageDay', () => {
  it("names each instant's UTC day, whatever day was asked for before", () => {
    const day = 86_400_000;
    const midnight = Date.UTC(2026, 10, 20);
    const asked = [
      [midnight + 13 * 3_600_000, '2026-11-20'],
      [midnight + 13 * 3_600_000, '2026-11-20'],
      [midnight - 1, '2026-11-19'],
      [midnight, '2026-11-20'],
      [midnight + day - 1, '2026-11-20'],
      [midnight + day, '2026-11-21'],
      [midnight - 1, '2026-11-19'],
      [Date.UTC(1969, 11, 31, 23), '1969-12-31'],
      [0, '1970-01-01'],
      [Date.UTC(2028, 1, 29, 12), '2028-02-29'],
    ] as const;
    for (const [at, expected] of asked) expect(usageDay(at), String(at)).toBe(expected);
  });
});
