import { describe, expect, it } from 'vitest';
import { callgrindTotal } from './instruction-count.js';

describe('callgrindTotal', () => {
  it('reads the totals line of a dump', () => {
    const dump =
      'version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nsummary: 803635339\n\nfn=(1) main\n3 15\ntotals: 803635340\n';
    expect(callgrindTotal(dump)).toBe(803635340);
  });

  it('falls back to the summary line, and refuses what is not a dump', () => {
    expect(callgrindTotal('events: Ir\nsummary: 17\n')).toBe(17);
    expect(() => callgrindTotal('PID 10092: /usr/bin/node\n')).toThrow(/no totals line/);
  });
});
