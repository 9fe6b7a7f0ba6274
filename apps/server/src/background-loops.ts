import type { Logger } from 'pino';
import type { Clock } from './domain/clock.js';
import { type Part, type Role, runsPart } from './role.js';
import type { Notifier, WakeChannel } from './store/notifier.js';
import { createWorkerLoop, type WorkerLoop } from './worker-loop.js';

/**
 * A background loop as the composition root declares it: what it does, in which part of the
 * service, how often it looks without being woken, and what wakes it.
 */
export interface LoopSpec<Name extends string = string> {
  name: Name;
  /** The part that runs it: a process whose role includes that part starts it. */
  part: Part;
  /** Does one pass; returns how many items it handled (another pass follows at once if any). */
  work: () => Promise<number>;
  /** When its next item becomes due (null: nothing scheduled); it sleeps until then or the poll. */
  nextDueAt: () => Promise<number | null>;
  pollIntervalMs: number;
  /** False: not started (a setting turned it off); default true. */
  enabled?: boolean;
  /** The store's wake-up that wakes it, from this process or another (store/notifier.ts). */
  wakeOn?: WakeChannel;
  /** Told of each of those wake-ups, before the loop is woken. */
  onWakeUp?: () => void;
  /** Awaited once the loop stopped, before the next one in the table stops. */
  afterStop?: () => Promise<void>;
}

export interface BackgroundLoops<Name extends string> {
  /** Wakes the named loop, if this process runs it. */
  wake(name: Name): void;
  /** Starts the loops, in the table's order. */
  start(): void;
  /** Stops the loops, in the table's order. */
  stop(): Promise<void>;
}

/** The loops of the table that `role` runs, subscribed to their wake-ups. */
export function createBackgroundLoops<Name extends string>(
  table: ReadonlyArray<LoopSpec<Name>>,
  context: { role: Role; clock: Clock; logger: Logger; notifier: Notifier },
): BackgroundLoops<Name> {
  const loops: Array<{ spec: LoopSpec<Name>; loop: WorkerLoop }> = [];
  for (const spec of table) {
    if (!runsPart(context.role, spec.part) || spec.enabled === false) continue;
    const loop = createWorkerLoop({
      name: spec.name,
      work: spec.work,
      nextDueAt: spec.nextDueAt,
      clock: context.clock,
      pollIntervalMs: spec.pollIntervalMs,
      logger: context.logger,
    });
    const { wakeOn, onWakeUp } = spec;
    if (wakeOn !== undefined) {
      context.notifier.subscribe(wakeOn, () => {
        onWakeUp?.();
        loop.wake();
      });
    }
    loops.push({ spec, loop });
  }
  const byName = new Map(loops.map(({ spec, loop }) => [spec.name, loop]));
  return {
    wake(name) {
      byName.get(name)?.wake();
    },
    start() {
      for (const { loop } of loops) loop.start();
    },
    async stop() {
      for (const { spec, loop } of loops) {
        await loop.stop();
        await spec.afterStop?.();
      }
    },
  };
}
