import { type Kysely, type QueryCreator, sql } from 'kysely';
import { hotQuery } from './engine/compiled-query.js';
import type { Database } from './schema.js';

/**
 * Webhook idempotency: which (`X-GitHub-Delivery` GUID, `X-GitHub-Hook-ID`) pairs were processed.
 * The GUID alone is no key: GitHub gives one event the same GUID on every hook that receives it
 * ("shared with all deliveries for all webhooks that subscribe to this event",
 * https://docs.github.com/rest/repos/webhooks#list-deliveries-for-a-repository-webhook), and a
 * repository that is a provider and a completion-tracked consumer has two of Zekt's hooks.
 */

/**
 * `hook_id` of the App's webhook (signed with the App's secret). Zekt does not know that hook's id,
 * and the `X-GitHub-Hook-ID` header is not covered by the signature, so every App webhook is keyed
 * on this one id (GitHub's hook ids start at 1).
 */
export const APP_WEBHOOK_ID = 0;

/**
 * Remembers a GUID received through a hook (`hookId`: a hook Zekt placed, whose secret signed it,
 * or null / `APP_WEBHOOK_ID` for the App's webhook), so a redelivery of it to that hook is
 * acknowledged without being processed again. Returns false when it was already recorded: in
 * `webhook_receipts`, or in `webhook_deliveries` (written before migration 0010, or by a previous
 * version during a rolling upgrade) for the same hook, for an unknown one (its `hook_id` null), or
 * — for the App's webhook, whose events reach no other hook — for any.
 */
export async function recordWebhookDelivery(
  db: Kysely<Database>,
  delivery: { guid: string; event: string; hookId: number | null },
  now: number,
): Promise<boolean> {
  const result = await recordWebhookDeliveryQuery.execute(db, {
    guid: delivery.guid,
    event: delivery.event,
    hookId: delivery.hookId ?? APP_WEBHOOK_ID,
    now,
  });
  return Number(result.numAffectedRows ?? 0n) === 1;
}

// One statement, so the check of the older table costs no round trip on the webhook's path. The
// parameters are cast: PostgreSQL cannot infer the type of one in a select list. A completion
// webhook on PostgreSQL writes its receipt by the statement that stores its event, for a group of
// webhooks at once, with the same rule (received-event-on-postgres.ts).
const buildRecordWebhookDelivery = (
  db: QueryCreator<Database>,
  p: { guid: string; event: string; hookId: number; now: number },
) =>
  db
    .insertInto('webhook_receipts')
    .columns(['delivery_guid', 'hook_id', 'event', 'received_at'])
    .expression(
      db
        .selectNoFrom([
          sql<string>`cast(${p.guid} as text)`.as('delivery_guid'),
          sql<number>`cast(${p.hookId} as bigint)`.as('hook_id'),
          sql<string>`cast(${p.event} as text)`.as('event'),
          sql<number>`cast(${p.now} as bigint)`.as('received_at'),
        ])
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('webhook_deliveries')
                .select(sql`1`.as('one'))
                .where('delivery_guid', '=', p.guid)
                .where((row) =>
                  row.or([
                    row('hook_id', '=', p.hookId),
                    row('hook_id', 'is', null),
                    sql<boolean>`cast(${p.hookId} as bigint) = ${APP_WEBHOOK_ID}`,
                  ]),
                ),
            ),
          ),
        ),
    )
    .onConflict((oc) => oc.columns(['delivery_guid', 'hook_id']).doNothing());

const recordWebhookDeliveryQuery = hotQuery(buildRecordWebhookDelivery);

/**
 * A GUID Zekt processed and the hook it came through: `APP_WEBHOOK_ID` for the App's webhook; a row
 * from before migration 0010 has the header's hook id, or null when it named none.
 */
export interface WebhookReceipt {
  guid: string;
  hookId: number | null;
}

/** Every receipt of `guids`, from both tables. */
export async function findWebhookReceipts(db: Kysely<Database>, guids: string[]): Promise<WebhookReceipt[]> {
  if (guids.length === 0) return [];
  const [receipts, legacy] = await Promise.all([
    db
      .selectFrom('webhook_receipts')
      .select(['delivery_guid', 'hook_id'])
      .where('delivery_guid', 'in', guids)
      .execute(),
    db
      .selectFrom('webhook_deliveries')
      .select(['delivery_guid', 'hook_id'])
      .where('delivery_guid', 'in', guids)
      .execute(),
  ]);
  return [
    ...receipts.map((row) => ({ guid: row.delivery_guid, hookId: Number(row.hook_id) })),
    ...legacy.map((row) => ({
      guid: row.delivery_guid,
      hookId: row.hook_id === null ? null : Number(row.hook_id),
    })),
  ];
}
