import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createBackgroundLoops, type LoopSpec } from './background-loops.js';
import { createManualClock } from './domain/clock.js';
import { createLocalNotifier } from './store/notifier.js';

const HOUR = 3_600_000;

/** A loop that records its passes (and its stop) in `seen`; `passes(name, n)` resolves at the n-th. */
function recorder() {
  const seen: string[] = [];
  const waiting: Array<{ name: string; count: number; resolve: () => void }> = [];
  const count = (name: string) => seen.filter((s) => s === name).length;
  return {
    seen,
    spec(name: string, more: Partial<LoopSpec> = {}): LoopSpec {
      return {
        name,
        part: 'worker',
        work: async () => {
          seen.push(name);
          for (const w of waiting.filter((w) => w.name === name && count(name) >= w.count)) w.resolve();
          return 0;
        },
        nextDueAt: async () => null,
        // Long: a pass after the first is a wake-up's, never the poll's.
        pollIntervalMs: HOUR,
        ...more,
      };
    },
    passes: (name: string, n: number) =>
      new Promise<void>((resolve) =>
        count(name) >= n ? resolve() : waiting.push({ name, count: n, resolve }),
      ),
  };
}

const context = (role: 'api' | 'worker' | 'all') => ({
  role,
  clock: createManualClock(0),
  logger: pino({ level: 'silent' }),
  notifier: createLocalNotifier(),
});

describe('background loops', () => {
  it('runs the loops of the parts its role includes, unless turned off', async () => {
    for (const [role, expected] of [
      ['api', ['api-loop']],
      ['worker', ['worker-loop']],
      ['all', ['api-loop', 'worker-loop']],
    ] as const) {
      const r = recorder();
      const loops = createBackgroundLoops(
        [r.spec('api-loop', { part: 'api' }), r.spec('worker-loop'), r.spec('off-loop', { enabled: false })],
        context(role),
      );
      loops.start();
      await Promise.all(expected.map((name) => r.passes(name, 1)));
      await loops.stop();
      expect([...new Set(r.seen)].sort()).toEqual([...expected]);
    }
  });

  it('wakes a loop by name and on its wake-up, telling it of the wake-up first', async () => {
    const r = recorder();
    const ctx = context('worker');
    const hints: number[] = [];
    const loops = createBackgroundLoops(
      [r.spec('router'), r.spec('dispatcher', { wakeOn: 'deliveries', onWakeUp: () => hints.push(1) })],
      ctx,
    );
    loops.start();
    await r.passes('dispatcher', 1);
    loops.wake('router');
    await r.passes('router', 2);
    ctx.notifier.notify('deliveries');
    expect(hints).toHaveLength(1);
    await r.passes('dispatcher', 2);
    await loops.stop();
  });

  it("stops the loops in the table's order, each one's afterStop before the next stops", async () => {
    const r = recorder();
    const drained: string[] = [];
    const loops = createBackgroundLoops(
      [
        r.spec('first'),
        r.spec('second', {
          // Runs while `third` still runs: woken, it makes another pass.
          afterStop: async () => {
            loops.wake('third');
            await r.passes('third', 2);
            drained.push('second');
          },
        }),
        r.spec('third', {
          afterStop: async () => {
            drained.push('third');
          },
        }),
      ],
      context('all'),
    );
    loops.start();
    await Promise.all(['first', 'second', 'third'].map((name) => r.passes(name, 1)));
    await loops.stop();
    expect(drained).toEqual(['second', 'third']);
  });
});
