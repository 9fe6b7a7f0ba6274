import { type Kysely, sql } from 'kysely';
import {
  isReceivedThrough,
  type PreviousAsk,
  parseWebhookKey,
  type ReconciledWebhook,
  webhookKey,
} from '../domain/reconcile.js';
import type { Database } from './schema.js';
import { findWebhookReceipts } from './webhook-deliveries.js';

/**
 * What the reconciler asked GitHub to redeliver (`webhook_redeliveries`), per GUID and webhook —
 * a GUID is the event's, shared by every hook that received it — how many times, and
 * `recovered_at` once it arrived. Whether to ask again is domain/reconcile.ts's rule.
 */
export interface RedeliveryRequest {
  guid: string;
  /** `app`, or `repository:<hook id>` (domain/reconcile.ts `webhookKey`). */
  hook: string;
  githubDeliveryId: number;
  event: string;
  action: string | null;
}

/** What Zekt knows of failed GUIDs of one webhook: received through it, or asked for before. */
export interface RedeliveryState {
  received: Set<string>;
  asked: Map<string, PreviousAsk & { gaveUp: boolean }>;
}

export async function findRedeliveryState(
  db: Kysely<Database>,
  webhook: ReconciledWebhook,
  guids: string[],
): Promise<RedeliveryState> {
  if (guids.length === 0) return { received: new Set(), asked: new Map() };
  const [receipts, asked] = await Promise.all([
    findWebhookReceipts(db, guids),
    db
      .selectFrom('webhook_redeliveries')
      .select(['delivery_guid', 'asks', 'asked_at', 'github_delivery_id', 'gave_up_at'])
      .where('hook', '=', webhookKey(webhook))
      .where('delivery_guid', 'in', guids)
      .execute(),
  ]);
  const received = new Set(
    guids.filter((guid) =>
      isReceivedThrough(
        webhook,
        receipts.filter((receipt) => receipt.guid === guid),
      ),
    ),
  );
  return {
    received,
    asked: new Map(
      asked.map((row) => [
        row.delivery_guid,
        {
          asks: Number(row.asks),
          askedAt: Number(row.asked_at),
          githubDeliveryId: Number(row.github_delivery_id),
          gaveUp: row.gave_up_at !== null,
        },
      ]),
    ),
  };
}

/** Records an ask: the first (`asks` 1), or one more for the newest failed attempt. */
export async function recordRedeliveryRequest(
  db: Kysely<Database>,
  request: RedeliveryRequest,
  now: number,
): Promise<void> {
  await db
    .insertInto('webhook_redeliveries')
    .values({
      delivery_guid: request.guid,
      hook: request.hook,
      github_delivery_id: request.githubDeliveryId,
      event: request.event,
      action: request.action,
      asks: 1,
      requested_at: now,
      asked_at: now,
      recovered_at: null,
      gave_up_at: null,
    })
    .onConflict((oc) =>
      oc.columns(['delivery_guid', 'hook']).doUpdateSet({
        asks: sql<number>`${sql.ref('webhook_redeliveries.asks')} + 1`,
        asked_at: now,
        github_delivery_id: request.githubDeliveryId,
      }),
    )
    .execute();
}

/** Sets `column` of a request to `now` unless it is set already; false when it was. */
async function setOnce(
  db: Kysely<Database>,
  request: Pick<RedeliveryRequest, 'guid' | 'hook'>,
  column: 'recovered_at' | 'gave_up_at',
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_redeliveries')
    .set({ [column]: now })
    .where('delivery_guid', '=', request.guid)
    .where('hook', '=', request.hook)
    .where(column, 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks a redelivery given up (its last allowed ask failed too); false when it already was. */
export function markGivenUp(
  db: Kysely<Database>,
  request: Pick<RedeliveryRequest, 'guid' | 'hook'>,
  now: number,
): Promise<boolean> {
  return setOnce(db, request, 'gave_up_at', now);
}

/**
 * Marks the requested redeliveries that have arrived since (received through the webhook they
 * were asked of) as recovered, and returns them.
 */
export async function markRecovered(db: Kysely<Database>, now: number): Promise<RedeliveryRequest[]> {
  const open = await db
    .selectFrom('webhook_redeliveries')
    .select(['delivery_guid', 'hook', 'github_delivery_id', 'event', 'action'])
    .where('recovered_at', 'is', null)
    .execute();
  if (open.length === 0) return [];
  const receipts = await findWebhookReceipts(db, [...new Set(open.map((row) => row.delivery_guid))]);
  const arrived = open.filter((row) => {
    const webhook = parseWebhookKey(row.hook);
    return (
      webhook !== null &&
      isReceivedThrough(
        webhook,
        receipts.filter((receipt) => receipt.guid === row.delivery_guid),
      )
    );
  });
  const recovered: RedeliveryRequest[] = [];
  for (const row of arrived) {
    if (!(await setOnce(db, { guid: row.delivery_guid, hook: row.hook }, 'recovered_at', now))) continue;
    recovered.push({
      guid: row.delivery_guid,
      hook: row.hook,
      githubDeliveryId: Number(row.github_delivery_id),
      event: row.event,
      action: row.action,
    });
  }
  return recovered;
}

/**
 * Forgets requests first made before `cutoff` (GitHub no longer lists their deliveries anyway),
 * and those the previous version left in `redelivery_requests`.
 */
export async function deleteOldRedeliveryRequests(db: Kysely<Database>, cutoff: number): Promise<number> {
  const [current, previous] = await Promise.all([
    db.deleteFrom('webhook_redeliveries').where('requested_at', '<', cutoff).executeTakeFirst(),
    db.deleteFrom('redelivery_requests').where('requested_at', '<', cutoff).executeTakeFirst(),
  ]);
  return Number(current.numDeletedRows ?? 0n) + Number(previous.numDeletedRows ?? 0n);
}
