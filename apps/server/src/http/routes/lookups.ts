import type { Kysely } from 'kysely';
import { getRepositoryByName } from '../../store/accounts.js';
import type { AccountRow, Database, RepositoryRow, ServiceRow, SubscriptionRow } from '../../store/schema.js';
import type { SubscriptionView } from '../api-schemas.js';
import { type Caller, isMemberOf } from '../authenticate.js';
import { HttpError } from '../problem.js';
import { subscriptionView } from '../views.js';

/**
 * Lookups shared by the management routes. Each one answers 404 both for objects that do not exist
 * and for objects of accounts the caller is not a member of: the API never confirms that another
 * account's object exists.
 */
export async function memberRepository(
  db: Kysely<Database>,
  caller: Caller,
  owner: string,
  repo: string,
): Promise<{ repository: RepositoryRow; account: AccountRow }> {
  const fullName = `${owner}/${repo}`;
  const repository = await getRepositoryByName(db, fullName);
  if (!repository || repository.removed_at !== null || !isMemberOf(caller, repository.account_id)) {
    throw new HttpError(
      'repository_not_found',
      `no repository ${fullName} in an installation you are a member of; install the Zekt App on it first`,
    );
  }
  const account = caller.accounts.find((a) => a.account_id === repository.account_id)!;
  return { repository, account };
}

/** Account logins by id, for views that name both sides of a subscription (one query). */
export async function accountLogins(db: Kysely<Database>, ids: number[]): Promise<Map<number, string>> {
  const unique = [...new Set(ids)];
  const rows =
    unique.length === 0
      ? []
      : await db
          .selectFrom('accounts')
          .select(['account_id', 'login'])
          .where('account_id', 'in', unique)
          .execute();
  const logins = new Map(rows.map((row) => [row.account_id, row.login]));
  for (const id of unique) if (!logins.has(id)) logins.set(id, String(id));
  return logins;
}

/** Repositories by id (one query). */
export async function repositoriesById(
  db: Kysely<Database>,
  ids: number[],
): Promise<Map<number, RepositoryRow>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('repositories').selectAll().where('repository_id', 'in', unique).execute();
  return new Map(rows.map((row) => [row.repository_id, row]));
}

/** Repository full names by id. */
export async function repositoryNames(db: Kysely<Database>, ids: number[]): Promise<Map<number, string>> {
  const rows = await repositoriesById(db, ids);
  return new Map([...rows].map(([id, row]) => [id, row.full_name]));
}

/** Services by id (one query). */
export async function servicesById(db: Kysely<Database>, ids: string[]): Promise<Map<string, ServiceRow>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('services').selectAll().where('service_id', 'in', unique).execute();
  return new Map(rows.map((row) => [row.service_id, row]));
}

/** Subscriptions as the API shows them, with the names of both sides (a few queries for the lot). */
export async function subscriptionViews(
  db: Kysely<Database>,
  subscriptions: SubscriptionRow[],
): Promise<SubscriptionView[]> {
  const services = await servicesById(
    db,
    subscriptions.map((s) => s.service_id),
  );
  const all = [...services.values()];
  const [logins, repositories] = await Promise.all([
    accountLogins(db, [...all.map((s) => s.account_id), ...subscriptions.map((s) => s.consumer_account_id)]),
    repositoriesById(db, [
      ...all.map((s) => s.repository_id),
      ...subscriptions.map((s) => s.consumer_repository_id),
    ]),
  ]);
  return subscriptions.map((subscription) => {
    const service = services.get(subscription.service_id)!;
    const consumerRepository = repositories.get(subscription.consumer_repository_id);
    return subscriptionView(subscription, {
      service,
      provider: logins.get(service.account_id) ?? '',
      providerRepository: repositories.get(service.repository_id)?.full_name ?? '',
      consumer: logins.get(subscription.consumer_account_id) ?? '',
      consumerRepository: consumerRepository?.full_name ?? '',
      completionTracking: Boolean(consumerRepository?.completion_enabled),
    });
  });
}
