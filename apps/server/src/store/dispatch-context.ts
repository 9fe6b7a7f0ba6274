import type { Kysely } from 'kysely';
import { hotQuery } from './compiled-query.js';
import type { Database, SubscriptionStatus } from './schema.js';

/**
 * Everything a dispatch attempt reads besides the claimed delivery row, in one statement: whether
 * its subscription is still approved, the consumer's installation and repository, and the archived
 * payload. Each part is null when its row is gone.
 */
export interface DispatchContext {
  subscriptionStatus: SubscriptionStatus | null;
  account: { login: string; installationId: number | null; uninstalledAt: number | null } | null;
  repository: { fullName: string; removedAt: number | null } | null;
  archive: { summary: string; hasMessage: boolean; payload: string | null } | null;
  /** When Zekt received the completion webhook of the delivery's event (the end-to-end metric's start). */
  eventReceivedAt: number | null;
}

export async function getDispatchContext(db: Kysely<Database>, deliveryId: string): Promise<DispatchContext> {
  const [row] = (await dispatchContextQuery.execute(db, { deliveryId })).rows;
  return {
    subscriptionStatus: row?.subscription_status ?? null,
    account:
      row?.account_id == null
        ? null
        : {
            login: row.login as string,
            installationId: row.installation_id ?? null,
            uninstalledAt: row.uninstalled_at ?? null,
          },
    repository:
      row?.repository_id == null
        ? null
        : {
            fullName: row.full_name as string,
            removedAt: row.removed_at ?? null,
          },
    archive:
      row?.archive_event_id == null
        ? null
        : {
            summary: row.summary as string,
            hasMessage: Boolean(row.has_message),
            payload: row.payload ?? null,
          },
    eventReceivedAt: row?.received_at ?? null,
  };
}

/**
 * Whether attempt `number` of a delivery was recorded. A durable delivery claimed for attempt n+1
 * whose attempt n has no record was reclaimed: its previous owner's lease expired before it could
 * record (the process died, or stalled past its lease). Claims that did not become attempts give
 * their number back (pacing, the per-installation cap), so numbers have no other gaps.
 */
export async function attemptRecorded(
  db: Kysely<Database>,
  deliveryId: string,
  number: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('delivery_attempts')
    .select('number')
    .where('delivery_id', '=', deliveryId)
    .where('number', '=', number)
    .executeTakeFirst();
  return row !== undefined;
}

const dispatchContextQuery = hotQuery((db, p: { deliveryId: string }) =>
  db
    .selectFrom('deliveries as d')
    .leftJoin('subscriptions as s', 's.subscription_id', 'd.subscription_id')
    .leftJoin('accounts as a', 'a.account_id', 'd.consumer_account_id')
    .leftJoin('repositories as r', 'r.repository_id', 'd.consumer_repository_id')
    .leftJoin('archives as ar', 'ar.event_id', 'd.event_id')
    .leftJoin('events as e', 'e.event_id', 'd.event_id')
    .select([
      's.status as subscription_status',
      'a.account_id as account_id',
      'a.login as login',
      'a.installation_id as installation_id',
      'a.uninstalled_at as uninstalled_at',
      'r.repository_id as repository_id',
      'r.full_name as full_name',
      'r.removed_at as removed_at',
      'ar.event_id as archive_event_id',
      'ar.summary as summary',
      'ar.has_message as has_message',
      'ar.payload as payload',
      'e.received_at as received_at',
    ])
    .where('d.delivery_id', '=', p.deliveryId),
);
