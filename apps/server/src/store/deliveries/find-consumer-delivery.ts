import type { Kysely } from 'kysely';
import type { Database, DeliveryRow } from '../schema.js';

/**
 * The delivery a consumer's confirm/complete call is about: the given delivery, or else
 * the newest non-final delivery of the correlation id to that repository, or else its newest final
 * one (so the caller learns it is final).
 */
export async function findConsumerDelivery(
  db: Kysely<Database>,
  lookup: { correlationId: string; consumerRepositoryId: number; deliveryId?: string | undefined },
): Promise<DeliveryRow | undefined> {
  const base = db
    .selectFrom('deliveries')
    .selectAll()
    .where('correlation_id', '=', lookup.correlationId)
    .where('consumer_repository_id', '=', lookup.consumerRepositoryId);
  if (lookup.deliveryId) return base.where('delivery_id', '=', lookup.deliveryId).executeTakeFirst();
  const open = await base
    .where('status', 'in', ['Dispatched', 'Confirmed'])
    .orderBy('delivery_id', 'desc')
    .executeTakeFirst();
  return open ?? base.orderBy('delivery_id', 'desc').executeTakeFirst();
}
