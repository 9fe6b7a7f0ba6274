import type { Kysely } from 'kysely';
import type { DeliveryStatus } from '../domain/delivery-state.js';
import type { Database, DeliveryRow } from './schema.js';

/**
 * Delivery records as the API shows them: the delivery row with the names of both sides and
 * the workflow of the run, in one query.
 */
export interface DeliveryRecordRow extends DeliveryRow {
  provider_login: string | null;
  provider_repository: string | null;
  consumer_login: string | null;
  consumer_repository: string | null;
  workflow_path: string | null;
  /** The run's summary (JSON text of a RunSummary) as it was received. */
  run_summary: string | null;
}

function selectRecords(db: Kysely<Database>) {
  return db
    .selectFrom('deliveries as d')
    .leftJoin('events as e', 'e.event_id', 'd.event_id')
    .leftJoin('accounts as pa', 'pa.account_id', 'd.provider_account_id')
    .leftJoin('repositories as pr', 'pr.repository_id', 'd.provider_repository_id')
    .leftJoin('accounts as ca', 'ca.account_id', 'd.consumer_account_id')
    .leftJoin('repositories as cr', 'cr.repository_id', 'd.consumer_repository_id')
    .selectAll('d')
    .select([
      'pa.login as provider_login',
      'pr.full_name as provider_repository',
      'ca.login as consumer_login',
      'cr.full_name as consumer_repository',
      'e.workflow_path as workflow_path',
      'e.summary as run_summary',
    ]);
}

export async function getDeliveryRecord(
  db: Kysely<Database>,
  deliveryId: string,
): Promise<DeliveryRecordRow | undefined> {
  return (await selectRecords(db).where('d.delivery_id', '=', deliveryId).executeTakeFirst()) as
    | DeliveryRecordRow
    | undefined;
}

export interface DeliveryFilter {
  /** Deliveries where one of these accounts is the provider or the consumer. */
  accountIds: number[];
  subscriptionId?: string | undefined;
  status?: DeliveryStatus | undefined;
  /** Only deliveries flagged not started (domain/not-started.ts) that are still Dispatched. */
  notStarted?: boolean | undefined;
  /** Only deliveries where the caller's accounts are this side. */
  side?: 'provider' | 'consumer' | undefined;
  /** The provider or the consumer repository (owner/repo). */
  repository?: string | undefined;
  /** The provider's run id. */
  correlationId?: string | undefined;
  /** Dispatched at or after / before (epoch ms). */
  since?: number | undefined;
  until?: number | undefined;
  /** Delivery ids sort by creation time (UUIDv7): the page continues below this id. */
  before?: string | undefined;
  limit: number;
}

/** Newest first. */
export async function listDeliveryRecords(
  db: Kysely<Database>,
  filter: DeliveryFilter,
): Promise<DeliveryRecordRow[]> {
  if (filter.accountIds.length === 0) return [];
  // One side at a time: each side's newest ids come straight off its (account, delivery_id)
  // index. "Either side" is the union of both sides' pages, not one OR over both columns, which
  // no index serves in delivery-id order (with a year of records, a page sorted every row of them).
  const side = (column: 'd.provider_account_id' | 'd.consumer_account_id') => {
    let query = selectRecords(db).where(column, 'in', filter.accountIds);
    if (filter.subscriptionId) query = query.where('d.subscription_id', '=', filter.subscriptionId);
    if (filter.status) query = query.where('d.status', '=', filter.status);
    if (filter.notStarted) {
      query = query.where('d.not_started_at', 'is not', null).where('d.status', '=', 'Dispatched');
    }
    if (filter.repository) {
      const name = filter.repository;
      query = query.where((eb) => eb.or([eb('pr.full_name', '=', name), eb('cr.full_name', '=', name)]));
    }
    if (filter.correlationId) query = query.where('d.correlation_id', '=', filter.correlationId);
    if (filter.since !== undefined) query = query.where('d.dispatched_at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('d.dispatched_at', '<', filter.until);
    if (filter.before) query = query.where('d.delivery_id', '<', filter.before);
    return query.orderBy('d.delivery_id', 'desc').limit(filter.limit);
  };
  if (filter.side === 'provider' || filter.side === 'consumer') {
    const column = filter.side === 'provider' ? 'd.provider_account_id' : 'd.consumer_account_id';
    return (await side(column).execute()) as DeliveryRecordRow[];
  }
  const rows = (await db
    .selectFrom(
      db
        .selectFrom(side('d.provider_account_id').as('p'))
        .selectAll()
        .union(db.selectFrom(side('d.consumer_account_id').as('c')).selectAll())
        .as('both'),
    )
    .selectAll()
    .orderBy('delivery_id', 'desc')
    .limit(filter.limit)
    .execute()) as DeliveryRecordRow[];
  return rows;
}
