import type { Kysely } from 'kysely';
import type { Database, DeliveryRow } from '../schema.js';

export function getDelivery(db: Kysely<Database>, deliveryId: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('deliveries').selectAll().where('delivery_id', '=', deliveryId).executeTakeFirst();
}
