import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAST_CONSUMER, startZekt } from '../src/comparison-targets.js';

// The `wrapper` option of a Zekt target: `npm run instructions -w bench` starts zekt serve under
// valgrind with it (src/instruction-count.ts).
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
