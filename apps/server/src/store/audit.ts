import type { Kysely } from 'kysely';
import type { AuditChange } from '../domain/audit.js';
import { newId } from '../domain/ids.js';
import type { KeysetPage } from './page.js';
import type { AuditEntryRow, Database } from './schema.js';

/**
 * Records a change in the audit trail, in the caller's transaction (`db` is the transaction that
 * made the change, so the entry exists exactly when the change does): one row per account the
 * change concerns, so each side of a subscription sees it. A change that concerns no account (a
 * token for a person without one) is kept with no account, for the operator.
 */
export async function recordAudit(db: Kysely<Database>, change: AuditChange, now: number): Promise<void> {
  const accounts = [...new Set(change.accountIds.map(Number))];
  const json = (value: Record<string, unknown> | null | undefined) =>
    value == null ? null : JSON.stringify(value);
  await db
    .insertInto('audit_entries')
    .values(
      (accounts.length > 0 ? accounts : [null]).map((accountId) => ({
        audit_id: newId('aud', now),
        account_id: accountId,
        actor_user_id: change.actor.userId,
        actor_login: change.actor.login,
        actor_token_id: change.actor.tokenId,
        action: change.action,
        target_type: change.target.type,
        target_id: change.target.id,
        before: json(change.before),
        after: json(change.after),
        created_at: now,
      })),
    )
    .execute();
}

/** Entries of the given accounts, newest first (ids sort by time), after the page's cursor. */
export function listAuditEntries(
  db: Kysely<Database>,
  filter: { accountIds: number[]; action?: string | undefined; targetId?: string | undefined },
  page: KeysetPage,
): Promise<AuditEntryRow[]> {
  if (filter.accountIds.length === 0) return Promise.resolve([]);
  let query = db
    .selectFrom('audit_entries')
    .selectAll()
    .where('account_id', 'in', filter.accountIds)
    .orderBy('audit_id', 'desc')
    .limit(page.limit);
  if (filter.action !== undefined) query = query.where('action', '=', filter.action);
  if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId);
  if (page.after) query = query.where('audit_id', '<', page.after[0]!);
  return query.execute();
}
