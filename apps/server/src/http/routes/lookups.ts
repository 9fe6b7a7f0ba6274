import type { Kysely } from 'kysely';
import { getAccount, getRepositoryByName } from '../../store/accounts.js';
import type { AccountRow, Database, RepositoryRow } from '../../store/schema.js';
import { type Caller, isMemberOf } from '../authenticate.js';
import { HttpError } from '../problem.js';

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
  if (!repository || repository.removed_at !== null || !isMemberOf(caller, Number(repository.account_id))) {
    throw new HttpError(
      404,
      'repository_not_found',
      `no repository ${fullName} in an installation you are a member of; install the Zekt App on it first`,
    );
  }
  const account = caller.accounts.find((a) => Number(a.account_id) === Number(repository.account_id))!;
  return { repository, account };
}

/** Account logins by id, for views that name both sides of a subscription. */
export async function accountLogins(db: Kysely<Database>, ids: number[]): Promise<Map<number, string>> {
  const logins = new Map<number, string>();
  for (const id of new Set(ids)) {
    const account: AccountRow | undefined = await getAccount(db, id);
    logins.set(id, account?.login ?? String(id));
  }
  return logins;
}

/** Repository full names by id. */
export async function repositoryNames(db: Kysely<Database>, ids: number[]): Promise<Map<number, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .selectFrom('repositories')
    .select(['repository_id', 'full_name'])
    .where('repository_id', 'in', unique)
    .execute();
  return new Map(rows.map((row) => [Number(row.repository_id), row.full_name]));
}
