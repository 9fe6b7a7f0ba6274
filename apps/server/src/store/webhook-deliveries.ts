import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Remembers `X-GitHub-Delivery` GUIDs so a redelivered webhook is acknowledged without being
 * processed again. Returns false when the GUID was already recorded.
 */
export async function recordWebhookDelivery(
  db: Kysely<Database>,
  delivery: { guid: string; event: string; hookId: number | null },
  now: number,
): Promise<boolean> {
  const result = await db
    .insertInto('webhook_deliveries')
    .values({
      delivery_guid: delivery.guid,
      event: delivery.event,
      hook_id: delivery.hookId,
      received_at: now,
    })
    .onConflict((oc) => oc.column('delivery_guid').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
