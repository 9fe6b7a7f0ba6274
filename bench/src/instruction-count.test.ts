import { describe, expect, it } from 'vitest';
import { callgrindTotal, countedDumps } from './instruction-count.js';

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

describe('countedDumps', () => {
  it('takes the counted window of this process, one dump per thread, and nothing else', () => {
    const names = [
      'callgrind.out.5784.1-01',
      'callgrind.out.5784.1-12',
      'callgrind.out.5784-01', // written when the process ended
      'callgrind.out.5784', // the same, before threads were told apart
      'callgrind.out.15784.1-01', // an earlier count kept in the same directory
      'callgrind.out.5784.2-01', // a second dump, not asked for
      'vgdb-pipe-from-vgdb-to-5784',
    ];
    expect(countedDumps(names, 5784)).toEqual([
      { name: 'callgrind.out.5784.1-01', thread: 1 },
      { name: 'callgrind.out.5784.1-12', thread: 12 },
    ]);
  });
});
