import type { Kysely } from 'kysely';
import { type DeliveryRoute, deliveryRouteOf } from '../domain/delivery-mode.js';
import { newId } from '../domain/ids.js';
import type { RoutableSubscription } from '../domain/routing.js';
import type { DispatchTarget } from './dispatch-context.js';
import { hotQuery } from './engine/compiled-query.js';
import type { KeysetPage } from './page.js';
import type { Database, SubscriptionRow, SubscriptionStatus } from './schema.js';
import { isUniqueViolation } from './store-errors.js';

/** Subscriptions (= connections): a consumer account's access to a service, delivering to one repo. */

export async function createSubscription(
  db: Kysely<Database>,
  request: {
    serviceId: string;
    consumerAccountId: number;
    consumerRepositoryId: number;
    requestedBy: string;
  },
  now: number,
): Promise<SubscriptionRow | 'duplicate'> {
  const row = {
    subscription_id: newId('sub', now),
    service_id: request.serviceId,
    consumer_account_id: request.consumerAccountId,
    consumer_repository_id: request.consumerRepositoryId,
    status: 'requested' as const,
    durable: false,
    delivery_mode: 'repository_dispatch' as const,
    dispatch_workflow: null,
    dispatch_ref: null,
    requested_by: request.requestedBy,
    requested_at: now,
    decided_by: null,
    decided_at: null,
    created_at: now,
    updated_at: now,
  };
  // The partial unique index `subscriptions_live` allows one requested-or-approved row per service and repo.
  const live = await db
    .selectFrom('subscriptions')
    .select('subscription_id')
    .where('service_id', '=', request.serviceId)
    .where('consumer_repository_id', '=', request.consumerRepositoryId)
    .where('status', 'in', ['requested', 'approved'])
    .executeTakeFirst();
  if (live) return 'duplicate';
  try {
    await db.insertInto('subscriptions').values(row).execute();
  } catch (error) {
    // Two requests raced past the check above; the index decided.
    if (isUniqueViolation(error)) return 'duplicate';
    throw error;
  }
  return row;
}

export function getSubscription(
  db: Kysely<Database>,
  subscriptionId: string,
): Promise<SubscriptionRow | undefined> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .executeTakeFirst();
}

/**
 * Subscriptions where one of `accountIds` is the consumer or owns the service (`role` narrows it to
 * one side), oldest first.
 */
export function listSubscriptions(
  db: Kysely<Database>,
  accountIds: number[],
  options: { role?: 'provider' | 'consumer' | undefined; page?: KeysetPage } = {},
) {
  if (accountIds.length === 0) return Promise.resolve([]);
  const page = options.page ?? { limit: 1_000 };
  let query = db
    .selectFrom('subscriptions')
    .innerJoin('services', 'services.service_id', 'subscriptions.service_id')
    .selectAll('subscriptions')
    .select(['services.account_id as provider_account_id'])
    .where((eb) =>
      options.role === 'provider'
        ? eb('services.account_id', 'in', accountIds)
        : options.role === 'consumer'
          ? eb('subscriptions.consumer_account_id', 'in', accountIds)
          : eb.or([
              eb('subscriptions.consumer_account_id', 'in', accountIds),
              eb('services.account_id', 'in', accountIds),
            ]),
    );
  if (page.after) query = query.where('subscriptions.subscription_id', '>', page.after[0]!);
  return query.orderBy('subscriptions.subscription_id').limit(page.limit).execute();
}

/**
 * Moves the subscription from `from` to `status`; false when it is no longer in `from` (another
 * decision came first), so two decisions read at once make one transition, not two.
 */
export async function setSubscriptionStatus(
  db: Kysely<Database>,
  subscriptionId: string,
  from: SubscriptionStatus,
  status: SubscriptionStatus,
  decidedBy: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('subscriptions')
    .set({ status, decided_by: decidedBy, decided_at: now, updated_at: now })
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setDurable(
  db: Kysely<Database>,
  subscriptionId: string,
  durable: boolean,
  now: number,
) {
  await db
    .updateTable('subscriptions')
    .set({ durable, updated_at: now })
    .where('subscription_id', '=', subscriptionId)
    .execute();
}

/** How the subscription delivers from now on (domain/delivery-mode.ts). */
export async function setDeliveryRoute(
  db: Kysely<Database>,
  subscriptionId: string,
  route: DeliveryRoute,
  now: number,
): Promise<void> {
  await db
    .updateTable('subscriptions')
    .set({
      delivery_mode: route.mode,
      dispatch_workflow: route.mode === 'workflow_dispatch' ? route.workflow : null,
      dispatch_ref: route.mode === 'workflow_dispatch' ? route.ref : null,
      updated_at: now,
    })
    .where('subscription_id', '=', subscriptionId)
    .execute();
}

/** A subscription's route, from its row. */
export function routeOfSubscription(
  row: Pick<SubscriptionRow, 'delivery_mode' | 'dispatch_workflow' | 'dispatch_ref'>,
): DeliveryRoute {
  return deliveryRouteOf({ mode: row.delivery_mode, workflow: row.dispatch_workflow, ref: row.dispatch_ref });
}

/**
 * Approved subscriptions of every service of a workflow, with what routing needs to know, and
 * where a delivery of each goes (the consumer's installation and repository, as the dispatcher's
 * claim would read them: a delivery handed to the dispatcher at creation is not read again).
 *
 * Read in the routing transaction, never from a cache (one was weighed): it costs ~7 µs on
 * SQLite, and across processes on PostgreSQL a cache learns of a revoked subscription, or of the
 * App uninstalled from a consumer, only after the change commits and its notification arrives: a
 * window in which an event would still be delivered where it no longer may go.
 */
export async function routableSubscriptions(
  db: Kysely<Database>,
  repositoryId: number,
  workflowPath: string,
): Promise<Array<RoutableSubscription & { target: DispatchTarget }>> {
  const { rows } = await routableSubscriptionsQuery.execute(db, { repositoryId, workflowPath });
  return rows.map(toRoutableSubscription);
}

/** A row of the routable subscriptions' read, as routing takes it. */
export function toRoutableSubscription(
  row: RoutableSubscriptionRow,
): RoutableSubscription & { target: DispatchTarget } {
  return {
    subscriptionId: row.subscription_id,
    serviceId: row.service_id,
    serviceEventType: row.event_type,
    consumerAccountId: row.consumer_account_id,
    consumerRepositoryId: row.consumer_repository_id,
    durable: Boolean(row.durable),
    completionTracking: Boolean(row.completion_enabled),
    deliveryMode: row.delivery_mode,
    schema:
      row.schema_version === null
        ? null
        : {
            slug: row.slug,
            version: row.schema_version,
            enforcement: row.schema_enforcement,
            requiresMessage: Boolean(row.schema_requires_message),
          },
    target: {
      account:
        row.login === null
          ? null
          : { login: row.login, installationId: row.installation_id, uninstalledAt: row.uninstalled_at },
      repository: {
        fullName: row.full_name,
        removedAt: row.removed_at,
        completionTracking: Boolean(row.completion_enabled),
      },
      route: routeOfSubscription(row),
    },
  };
}

/** The read of routable subscriptions, also a part of PostgreSQL's routing read (routing-read-on-postgres.ts). */
export const buildRoutableSubscriptions = (
  db: Kysely<Database>,
  p: { repositoryId: number; workflowPath: string },
) =>
  db
    .selectFrom('subscriptions')
    .innerJoin('services', 'services.service_id', 'subscriptions.service_id')
    .innerJoin('repositories', 'repositories.repository_id', 'subscriptions.consumer_repository_id')
    .leftJoin('accounts', 'accounts.account_id', 'subscriptions.consumer_account_id')
    .select([
      'subscriptions.subscription_id',
      'subscriptions.service_id',
      'services.event_type',
      'services.slug',
      'services.schema_version',
      'services.schema_enforcement',
      'services.schema_requires_message',
      'subscriptions.consumer_account_id',
      'subscriptions.consumer_repository_id',
      'subscriptions.durable',
      'subscriptions.delivery_mode',
      'subscriptions.dispatch_workflow',
      'subscriptions.dispatch_ref',
      'repositories.completion_enabled',
      'repositories.full_name',
      'repositories.removed_at',
      'accounts.login',
      'accounts.installation_id',
      'accounts.uninstalled_at',
    ])
    .where('services.repository_id', '=', p.repositoryId)
    .where('services.workflow_path', '=', p.workflowPath)
    .where('subscriptions.status', '=', 'approved')
    .orderBy('subscriptions.subscription_id');

export type RoutableSubscriptionRow = Awaited<
  ReturnType<ReturnType<typeof buildRoutableSubscriptions>['execute']>
>[number];

const routableSubscriptionsQuery = hotQuery(buildRoutableSubscriptions);
