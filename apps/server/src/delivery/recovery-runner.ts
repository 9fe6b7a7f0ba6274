import { randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import { RECOVERY_BATCH, RECOVERY_LEASE_MS } from '../domain/recovery.js';
import {
  claimRecovery,
  finishRecovery,
  holdRecovery,
  nextRecoverable,
  recordRecoveryItem,
  wasHandled,
  windowOf,
} from '../store/recoveries.js';
import type { DeliveryRow, RecoveryRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { noTracer, type Tracer } from '../tracing/tracer.js';
import { replayOnce } from './replay.js';

/**
 * Works through bulk recoveries in the worker role. Each delivery is replayed through the replay
 * path (so the dispatcher paces it like any other) in its own transaction, which also renews the
 * lease, records the delivery in `recovery_items` and moves the job's position: a worker that dies
 * leaves a job another takes over where it stopped, and no delivery is replayed twice by one job.
 */
export interface RecoveryRunner {
  /** Handles one batch of one recovery; returns how many deliveries it handled. */
  runOnce(): Promise<number>;
}

export function createRecoveryRunner(options: {
  store: Store;
  clock: Clock;
  wakeDispatcher: () => void;
  owner?: string;
  batchSize?: number;
  leaseMs?: number;
  /** A `zekt.recovery` span per replay, in the replayed run's trace (default: none). */
  tracer?: Tracer;
}): RecoveryRunner {
  const { store, clock } = options;
  const owner = options.owner ?? `recovery-${randomUUID()}`;
  const batch = options.batchSize ?? RECOVERY_BATCH;
  const leaseMs = options.leaseMs ?? RECOVERY_LEASE_MS;

  /** 'lost' when the job was cancelled or taken over: stop working on it. */
  async function handle(recovery: RecoveryRow, delivery: DeliveryRow): Promise<'done' | 'lost'> {
    return store.transaction(async (trx) => {
      const now = clock.now();
      if (!(await holdRecovery(trx, recovery.recovery_id, owner, now, leaseMs))) return 'lost';
      if (await wasHandled(trx, recovery.recovery_id, delivery.delivery_id)) return 'done';
      const item = { recoveryId: recovery.recovery_id, deliveryId: delivery.delivery_id };
      const result = await replayOnce(
        trx,
        now,
        { deliveryId: delivery.delivery_id, requestedBy: recovery.requested_by, actor: null },
        // Recovered already (by hand, or by an earlier recovery): replaying it again would send it twice.
        (current) => current.replayed_by === null,
        { tracer: options.tracer ?? noTracer, as: 'zekt.recovery', recoveryId: recovery.recovery_id },
      );
      if (result.outcome === 'replayed') {
        await recordRecoveryItem(trx, { ...item, outcome: 'replayed', replayId: result.replayId }, now);
      } else {
        await recordRecoveryItem(trx, { ...item, outcome: 'skipped', replayId: null }, now);
      }
      return 'done';
    });
  }

  return {
    async runOnce() {
      const recovery = await claimRecovery(store.db, owner, clock.now(), leaseMs);
      if (!recovery) return 0;
      const deliveries = await nextRecoverable(store.db, windowOf(recovery), recovery.position, batch);
      if (deliveries.length === 0) {
        await finishRecovery(store.db, recovery.recovery_id, 'completed', clock.now(), owner);
        return 1;
      }
      let handled = 0;
      for (const delivery of deliveries) {
        if ((await handle(recovery, delivery)) === 'lost') break;
        handled++;
      }
      if (handled > 0) options.wakeDispatcher();
      // A job taken from this worker mid-batch counts as work done: look for the next one at once.
      return Math.max(handled, 1);
    },
  };
}
