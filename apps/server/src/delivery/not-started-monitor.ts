import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { notStartedCutoff, notStartedDueAt } from '../domain/not-started.js';
import { type FlaggedDelivery, flagNotStarted, oldestAwaitingStart } from '../store/not-started.js';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/store.js';

/**
 * The worker pass that flags never-started deliveries (domain/not-started.ts), a batch per
 * transaction. Time comes from the injected clock, so tests move it instead of waiting.
 */
export interface NotStartedMonitor {
  /** Flags every delivery that has waited too long; returns them. */
  flag(): Promise<FlaggedDelivery[]>;
  /** When the next waiting delivery becomes late (null: none waits). */
  nextDueAt(): Promise<number | null>;
}

export function createNotStartedMonitor(options: {
  store: Store;
  clock: Clock;
  logger: Logger;
  afterMs: number;
  batchSize?: number;
  /**
   * Told about each batch flagged, inside the transaction that flags it: what it writes there (the
   * alerts) commits with the flags, so a process that dies after the commit cannot lose it.
   */
  onFlagged?: (flagged: FlaggedDelivery[], trx: Kysely<Database>) => Promise<void>;
  /** Told after each flagged batch committed. */
  afterFlagged?: () => void;
}): NotStartedMonitor {
  const { store, clock, afterMs } = options;
  const batch = options.batchSize ?? 500;
  return {
    async flag() {
      const all: FlaggedDelivery[] = [];
      for (;;) {
        const now = clock.now();
        const { examined, flagged } = await store.transaction(async (trx) => {
          const found = await flagNotStarted(trx, { cutoff: notStartedCutoff(now, afterMs), now, batch });
          if (found.flagged.length > 0) await options.onFlagged?.(found.flagged, trx);
          return found;
        });
        if (flagged.length > 0) {
          options.afterFlagged?.();
          options.logger.warn(
            { deliveryIds: flagged.map((f) => f.deliveryId).slice(0, 20), count: flagged.length },
            'deliveries not started: GitHub accepted them but no consumer workflow run was seen',
          );
        }
        all.push(...flagged);
        if (examined < batch) return all;
      }
    },
    async nextDueAt() {
      const since = await oldestAwaitingStart(store.db);
      return since === null ? null : notStartedDueAt(since, afterMs);
    },
  };
}
