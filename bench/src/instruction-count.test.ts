import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAST_CONSUMER, startZekt } from './comparison-targets.js';
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

describe('a Zekt target under a wrapper command', () => {
  it('runs zekt serve under the wrapper, which passes it on', { timeout: 60_000 }, async () => {
    // `env NAME=value node …` is the smallest wrapper there is: what it sets shows it ran.
    const target = await startZekt({
      name: 'wrapped',
      consumers: [FAST_CONSUMER],
      durable: true,
      wrapper: ['env', 'ZEKT_BENCH_WRAPPED=yes'],
    });
    try {
      const [pid] = target.pids();
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      expect(environ).toContain('ZEKT_BENCH_WRAPPED=yes');
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]).toBe(process.execPath);
    } finally {
      await target.stop();
    }
  });
});
