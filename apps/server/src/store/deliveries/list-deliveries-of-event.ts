import type { Kysely } from 'kysely';
import type { Database, DeliveryRow } from '../schema.js';

export function listDeliveriesOfEvent(db: Kysely<Database>, eventId: string): Promise<DeliveryRow[]> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('event_id', '=', eventId)
    .orderBy('delivery_id')
    .execute();
}
