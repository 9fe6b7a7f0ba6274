import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * What the reconciler asked GitHub to redeliver (issue 12 §3): each GUID once, so a webhook that
 * keeps failing is not asked for on every pass, and `recovered_at` once it arrived.
 */
export interface RedeliveryRequest {
  guid: string;
  hook: string;
  githubDeliveryId: number;
  event: string;
  action: string | null;
}

/** GUIDs of `guids` Zekt already received (webhook_deliveries) or already asked for. */
export async function findKnownGuids(db: Kysely<Database>, guids: string[]): Promise<Set<string>> {
  if (guids.length === 0) return new Set();
  const [received, requested] = await Promise.all([
    db.selectFrom('webhook_deliveries').select('delivery_guid').where('delivery_guid', 'in', guids).execute(),
    db
      .selectFrom('redelivery_requests')
      .select('delivery_guid')
      .where('delivery_guid', 'in', guids)
      .execute(),
  ]);
  return new Set([...received, ...requested].map((row) => row.delivery_guid));
}

export async function recordRedeliveryRequest(
  db: Kysely<Database>,
  request: RedeliveryRequest,
  now: number,
): Promise<void> {
  await db
    .insertInto('redelivery_requests')
    .values({
      delivery_guid: request.guid,
      hook: request.hook,
      github_delivery_id: request.githubDeliveryId,
      event: request.event,
      action: request.action,
      requested_at: now,
      recovered_at: null,
    })
    .onConflict((oc) => oc.column('delivery_guid').doNothing())
    .execute();
}

/**
 * Marks the requested redeliveries that have arrived since (their GUID is in webhook_deliveries)
 * as recovered, and returns them.
 */
export async function markRecovered(db: Kysely<Database>, now: number): Promise<RedeliveryRequest[]> {
  const arrived = await db
    .selectFrom('redelivery_requests')
    .innerJoin('webhook_deliveries', 'webhook_deliveries.delivery_guid', 'redelivery_requests.delivery_guid')
    .select([
      'redelivery_requests.delivery_guid',
      'redelivery_requests.hook',
      'redelivery_requests.github_delivery_id',
      'redelivery_requests.event',
      'redelivery_requests.action',
    ])
    .where('redelivery_requests.recovered_at', 'is', null)
    .execute();
  if (arrived.length === 0) return [];
  await db
    .updateTable('redelivery_requests')
    .set({ recovered_at: now })
    .where(
      'delivery_guid',
      'in',
      arrived.map((row) => row.delivery_guid),
    )
    .where('recovered_at', 'is', null)
    .execute();
  return arrived.map((row) => ({
    guid: row.delivery_guid,
    hook: row.hook,
    githubDeliveryId: row.github_delivery_id,
    event: row.event,
    action: row.action,
  }));
}

/** Forgets requests older than `cutoff` (GitHub no longer lists their deliveries anyway). */
export async function deleteOldRedeliveryRequests(db: Kysely<Database>, cutoff: number): Promise<number> {
  const result = await db
    .deleteFrom('redelivery_requests')
    .where('requested_at', '<', cutoff)
    .executeTakeFirst();
  return Number(result.numDeletedRows ?? 0n);
}
