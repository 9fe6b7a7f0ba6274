import type { Kysely, SelectQueryBuilder } from 'kysely';
import { type DeliveryRoute, deliveryRouteOf } from '../domain/delivery-mode.js';
import type { Database, DeliveryRow, SubscriptionStatus } from './schema.js';

/**
 * Everything a dispatch attempt reads besides the claimed delivery row, in one statement: whether
 * its subscription is still approved, the consumer's installation and repository, and the archived
 * payload. Each part is null when its row is gone.
 */
export interface DispatchContext {
  subscriptionStatus: SubscriptionStatus | null;
  account: { login: string; installationId: number | null; uninstalledAt: number | null } | null;
  /** `completionTracking`: its COMPLETION switch (a known run is then reported by its webhooks). */
  repository: { fullName: string; removedAt: number | null; completionTracking: boolean } | null;
  /** How the subscription delivers now (its row's; `repository_dispatch` when the row is gone). */
  route: DeliveryRoute;
  archive: { summary: string; hasMessage: boolean; payload: string | null } | null;
  /** When Zekt received the completion webhook of the delivery's event (the end-to-end metric's start). */
  eventReceivedAt: number | null;
}

/** The consumer end of a connection, as a dispatch attempt checks it (`account` null: its row is gone). */
export interface DispatchTarget {
  account: DispatchContext['account'];
  repository: NonNullable<DispatchContext['repository']>;
  route: DeliveryRoute;
}

/** What a dispatch attempt uses of the claimed delivery's own row. */
export type ClaimedDelivery = Pick<DeliveryRow, (typeof CLAIMED_COLUMNS)[number]>;

/** The columns of a claimed delivery an attempt uses (the claims read no more on SQLite). */
export const CLAIMED_COLUMNS = [
  'delivery_id',
  'subscription_id',
  'consumer_account_id',
  'consumer_repository_id',
  'correlation_id',
  'event_type',
  'durable',
  'attempt_count',
  'retry_number',
  'replay_of',
  'slot_reserved',
  'trace_parent',
  'schema_version',
] as const;

/** A claimed row cut to `CLAIMED_COLUMNS`. */
export function claimedColumns(row: ClaimedDelivery): ClaimedDelivery {
  const claimed: Record<string, unknown> = {};
  for (const column of CLAIMED_COLUMNS) claimed[column] = row[column];
  return claimed as ClaimedDelivery;
}

/** A delivery's context as `withContextColumns` reads it, one column per part. */
export interface ContextRow {
  delivery_id: string;
  subscription_status: SubscriptionStatus | null;
  delivery_mode: string | null;
  dispatch_workflow: string | null;
  dispatch_ref: string | null;
  completion_enabled: boolean | number | null;
  account_id: number | null;
  login: string | null;
  installation_id: number | null;
  uninstalled_at: number | null;
  repository_id: number | null;
  full_name: string | null;
  removed_at: number | null;
  archive_event_id: string | null;
  summary: string | null;
  has_message: boolean | number | null;
  payload: string | null;
  received_at: number | null;
}

/** The joins and columns of a delivery's context, on a query of deliveries aliased `d`. */
export function withContextColumns<DB extends Database & { d: Database['deliveries'] }>(
  qb: SelectQueryBuilder<DB, 'd', object>,
) {
  return (qb as unknown as SelectQueryBuilder<Database & { d: Database['deliveries'] }, 'd', object>)
    .leftJoin('subscriptions as s', 's.subscription_id', 'd.subscription_id')
    .leftJoin('accounts as a', 'a.account_id', 'd.consumer_account_id')
    .leftJoin('repositories as r', 'r.repository_id', 'd.consumer_repository_id')
    .leftJoin('archives as ar', 'ar.event_id', 'd.event_id')
    .leftJoin('events as e', 'e.event_id', 'd.event_id')
    .select([
      'd.delivery_id',
      's.status as subscription_status',
      's.delivery_mode as delivery_mode',
      's.dispatch_workflow as dispatch_workflow',
      's.dispatch_ref as dispatch_ref',
      'a.account_id as account_id',
      'a.login as login',
      'a.installation_id as installation_id',
      'a.uninstalled_at as uninstalled_at',
      'r.repository_id as repository_id',
      'r.full_name as full_name',
      'r.removed_at as removed_at',
      'r.completion_enabled as completion_enabled',
      'ar.event_id as archive_event_id',
      'ar.summary as summary',
      'ar.has_message as has_message',
      'ar.payload as payload',
      'e.received_at as received_at',
    ]);
}

/** The context of a `ContextRow`, each part null where its row is gone. */
export function toDispatchContext(row: Omit<ContextRow, 'delivery_id'> | undefined): DispatchContext {
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
            completionTracking: Boolean(row.completion_enabled),
          },
    route: deliveryRouteOf({
      mode: row?.delivery_mode ?? null,
      workflow: row?.dispatch_workflow ?? null,
      ref: row?.dispatch_ref ?? null,
    }),
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
