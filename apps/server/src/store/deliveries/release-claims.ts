import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Gives claimed deliveries back untouched (their claim is not an attempt): the worker took more of
 * one installation's deliveries than it may have in flight at once.
 */
export async function releaseClaims(
  db: Kysely<Database>,
  owner: string,
  deliveryIds: readonly string[],
): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db
    .updateTable('deliveries')
    .set((eb) => ({ lease_owner: null, lease_expires_at: null, attempt_count: eb('attempt_count', '-', 1) }))
    .where('delivery_id', 'in', [...deliveryIds])
    .where('lease_owner', '=', owner)
    .execute();
}
