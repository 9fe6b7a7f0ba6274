import type { Clock } from '../domain/clock.js';
import { newDeliveryId } from '../domain/ids.js';
import { getArchive } from '../store/archives.js';
import { getDelivery, insertDeliveries, newDeliveryRow } from '../store/deliveries.js';
import type { DeliveryRow } from '../store/schema.js';
import type { Store } from '../store/store.js';

/**
 * Replay (SPEC 7; the seed's section 3): a new delivery of the archived payload, non-destructive.
 * The new record has its own id, its own `retryNumber` from 0 (a replay is not a retry) and
 * `replayOf`; the original keeps its state and gains `replayedBy`. The dispatcher sends it with `isReplay: true`.
 */
export type ReplayResult =
  | { outcome: 'not_found' }
  | { outcome: 'archive_expired' }
  | { outcome: 'replayed'; original: DeliveryRow; replayId: string };

export async function replayDelivery(
  deps: { store: Store; clock: Clock },
  deliveryId: string,
  mayAccess: (delivery: DeliveryRow) => boolean,
): Promise<ReplayResult> {
  return deps.store.transaction(async (trx) => {
    const original = await getDelivery(trx, deliveryId);
    if (!original || !mayAccess(original)) return { outcome: 'not_found' };
    const now = deps.clock.now();
    const archive = await getArchive(trx, original.event_id);
    if (!archive || Number(archive.expires_at) < now) return { outcome: 'archive_expired' };
    const replayId = newDeliveryId(now);
    await insertDeliveries(trx, [
      newDeliveryRow(
        {
          deliveryId: replayId,
          eventId: original.event_id,
          subscriptionId: original.subscription_id,
          serviceId: original.service_id,
          providerAccountId: Number(original.provider_account_id),
          providerRepositoryId: Number(original.provider_repository_id),
          consumerAccountId: Number(original.consumer_account_id),
          consumerRepositoryId: Number(original.consumer_repository_id),
          correlationId: original.correlation_id,
          runAttempt: original.run_attempt,
          eventType: original.event_type,
          durable: Boolean(original.durable),
          replayOf: original.delivery_id,
        },
        now,
      ),
    ]);
    await trx
      .updateTable('deliveries')
      .set({ replayed_by: replayId, updated_at: now })
      .where('delivery_id', '=', original.delivery_id)
      .execute();
    return { outcome: 'replayed', original, replayId };
  });
}
