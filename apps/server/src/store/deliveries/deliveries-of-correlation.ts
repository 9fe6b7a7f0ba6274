import type { Kysely } from 'kysely';
import type { Database, DeliveryRow } from '../schema.js';

/** Every delivery of a correlation id (the candidates a per-delivery token may belong to). */
export function deliveriesOfCorrelation(db: Kysely<Database>, correlationId: string): Promise<DeliveryRow[]> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('correlation_id', '=', correlationId)
    .orderBy('delivery_id', 'desc')
    .limit(100)
    .execute();
}
