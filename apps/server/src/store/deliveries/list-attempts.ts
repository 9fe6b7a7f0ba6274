import type { Kysely } from 'kysely';
import type { Database, DeliveryAttemptRow } from '../schema.js';

export function listAttempts(db: Kysely<Database>, deliveryId: string): Promise<DeliveryAttemptRow[]> {
  return db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('number')
    .execute();
}
