import type { Kysely } from 'kysely';
import { hotQuery } from './compiled-query.js';
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
  const result = await recordWebhookDeliveryQuery.execute(db, {
    guid: delivery.guid,
    event: delivery.event,
    hookId: delivery.hookId,
    now,
  });
  return Number(result.numAffectedRows ?? 0n) === 1;
}

const recordWebhookDeliveryQuery = hotQuery(
  (db, p: { guid: string; event: string; hookId: number | null; now: number }) =>
    db
      .insertInto('webhook_deliveries')
      .values({ delivery_guid: p.guid, event: p.event, hook_id: p.hookId, received_at: p.now })
      .onConflict((oc) => oc.column('delivery_guid').doNothing()),
);
