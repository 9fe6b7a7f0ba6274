import type { Kysely } from 'kysely';
import type { Database, DeliveryRow, DeliveryUpdate } from '../schema.js';

/**
 * Writes a state change only if the delivery is still in the state it was read in; returns false
 * when another writer (the completion webhook, a second call) got there first.
 */
export async function changeDeliveryState(
  db: Kysely<Database>,
  deliveryId: string,
  expected: { status: string; confirmationAttempts: number },
  update: DeliveryUpdate,
): Promise<boolean> {
  const result = await db
    .updateTable('deliveries')
    .set(update)
    .where('delivery_id', '=', deliveryId)
    .where('status', '=', expected.status as DeliveryRow['status'])
    .where('confirmation_attempts', '=', expected.confirmationAttempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
