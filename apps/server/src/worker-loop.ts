import type { Logger } from 'pino';
import type { Clock } from './domain/clock.js';

/**
 * Runs a unit of background work (routing, dispatching) until stopped. Work is found in the
 * store; `wake()` is only a hint that some arrived, so a lost wake-up costs at most one poll
 * interval, never an event.
 */
export interface WorkerLoop {
  start(): void;
  wake(): void;
  stop(): Promise<void>;
}

export interface WorkerLoopOptions {
  name: string;
  /** Does one pass of work; returns how many items it handled. */
  work: () => Promise<number>;
  /** When the next item becomes due (null: nothing scheduled). */
  nextDueAt: () => Promise<number | null>;
  clock: Clock;
  pollIntervalMs: number;
  logger: Logger;
}

export function createWorkerLoop(options: WorkerLoopOptions): WorkerLoop {
  let running = false;
  let stopped: Promise<void> | null = null;
  let wakeUp: (() => void) | null = null;
  let woken = false;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      // Stopped during a pass: do not start a wait (the retention loop's is an hour long).
      if (!running || woken) {
        woken = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeUp = null;
        woken = false;
        resolve();
      }
      wakeUp = done;
    });

  async function run(): Promise<void> {
    let failures = 0;
    while (running) {
      try {
        const handled = await options.work();
        failures = 0;
        if (handled > 0) continue;
        const due = await options.nextDueAt();
        const untilDue = due === null ? options.pollIntervalMs : due - options.clock.now();
        await sleep(Math.max(0, Math.min(options.pollIntervalMs, untilDue)));
      } catch (error) {
        failures++;
        options.logger.error({ err: error, worker: options.name }, `${options.name} pass failed`);
        // Back off while the store is unavailable instead of spinning.
        await sleep(Math.min(30_000, 250 * 2 ** Math.min(failures, 7)));
      }
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      stopped = run();
    },
    wake() {
      if (wakeUp) wakeUp();
      else woken = true;
    },
    async stop() {
      running = false;
      wakeUp?.();
      await stopped;
    },
  };
}
