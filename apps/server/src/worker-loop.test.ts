import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createManualClock } from './domain/clock.js';
import { createWorkerLoop } from './worker-loop.js';

const HOUR = 3_600_000;

function loop(work: () => Promise<number>) {
  return createWorkerLoop({
    name: 'test',
    work,
    nextDueAt: async () => null,
    clock: createManualClock(0),
    // The retention loop's interval: a stop that waited for it would never finish in a test.
    pollIntervalMs: HOUR,
    logger: pino({ level: 'silent' }),
  });
}

/** Work that counts its passes; `reached(n)` resolves once the n-th pass has run. */
function countedWork() {
  let passes = 0;
  let waiting: Array<{ passes: number; resolve: () => void }> = [];
  return {
    passes: () => passes,
    work: async () => {
      passes++;
      for (const waiter of waiting.filter((w) => passes >= w.passes)) waiter.resolve();
      waiting = waiting.filter((w) => passes < w.passes);
      return 0;
    },
    reached: (count: number) =>
      new Promise<void>((resolve) =>
        passes >= count ? resolve() : waiting.push({ passes: count, resolve }),
      ),
  };
}

// The loop goes idle (into its poll wait) in the microtasks after a pass; one turn of the event
// loop later it is there, however loaded the machine is.
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('worker loop', () => {
  it('stops while idle, without waiting for the poll interval', async () => {
    const counted = countedWork();
    const worker = loop(counted.work);
    worker.start();
    await counted.reached(1);
    await settle();
    await worker.stop();
    expect(counted.passes()).toBe(1);
  });

  it('stops when asked during a pass: the pass finishes, no wait starts after it', async () => {
    let finishPass: (handled: number) => void = () => {};
    let passes = 0;
    const worker = loop(
      () =>
        new Promise<number>((resolve) => {
          passes++;
          finishPass = resolve;
        }),
    );
    worker.start();
    const stopping = worker.stop();
    finishPass(0);
    await stopping;
    expect(passes).toBe(1);
  });

  it('wakes for work between polls', async () => {
    const counted = countedWork();
    const worker = loop(counted.work);
    worker.start();
    await counted.reached(1);
    await settle();
    // Without the wake the second pass would come after the hour's poll interval: the test times out.
    worker.wake();
    await counted.reached(2);
    await worker.stop();
    expect(counted.passes()).toBe(2);
  });
});
