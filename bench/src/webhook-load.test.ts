import { describe, expect, it } from 'vitest';
import { timedFrom } from './webhook-load.js';

describe('an open-loop webhook is timed', () => {
  it('from when it was due when the sender fell behind, so the lag counts against the target', () => {
    expect(timedFrom(1_000, 1_007.5)).toBe(1_000);
  });

  it('from when it left when the timer let it go early, so no latency is negative', () => {
    expect(timedFrom(1_000, 999.2)).toBe(999.2);
  });
});
