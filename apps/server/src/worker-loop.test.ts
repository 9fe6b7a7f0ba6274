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

describe('worker loop', () => {
  it('stops while idle, without waiting for the poll interval', async () => {
    let passes = 0;
    const worker = loop(async () => {
      passes++;
      return 0;
    });
    worker.start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await worker.stop();
    expect(passes).toBe(1);
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
    let passes = 0;
    const worker = loop(async () => {
      passes++;
      return 0;
    });
    worker.start();
    await new Promise((resolve) => setTimeout(resolve, 10));
    worker.wake();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await worker.stop();
    expect(passes).toBe(2);
  });
});
