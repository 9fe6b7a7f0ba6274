import { type Kysely, sql } from 'kysely';
import type { KeysetPage } from './page.js';
import type { AlertsTable, Database } from './schema.js';

/**
 * The alert outbox: alerts are raised into it, deduplicated over a window, and sent
 * by a worker that leases each one for one send, like the dispatcher leases deliveries.
 */
export type AlertRow = AlertsTable;

/**
 * Stores an alert unless one with the same key was raised since `dedupSince`; true when stored.
 * Check and insert are not one statement: two processes raising the same alert in the same instant
 * may both store it, which costs a duplicate alert, never a lost one.
 */
export async function raiseAlert(
  db: Kysely<Database>,
  alert: Pick<AlertRow, 'alert_id' | 'account_id' | 'kind' | 'dedup_key' | 'payload' | 'status'>,
  dedupSince: number,
  now: number,
): Promise<boolean> {
  const existing = await db
    .selectFrom('alerts')
    .select('alert_id')
    .where('dedup_key', '=', alert.dedup_key)
    .where('created_at', '>=', dedupSince)
    .executeTakeFirst();
  if (existing !== undefined) return false;
  await db
    .insertInto('alerts')
    .values({
      ...alert,
      attempts: 0,
      next_attempt_at: alert.status === 'pending' ? now : null,
      lease_owner: null,
      lease_expires_at: null,
      last_error: null,
      sent_at: null,
      created_at: now,
    })
    .execute();
  return true;
}

/** Takes up to `limit` due alerts for one send each; an expired lease (a dead worker) is taken over. */
export async function claimDueAlerts(
  db: Kysely<Database>,
  claim: { owner: string; leaseMs: number; limit: number },
  now: number,
): Promise<AlertRow[]> {
  const due = await db
    .selectFrom('alerts')
    .select('alert_id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
    .orderBy('next_attempt_at')
    .limit(claim.limit)
    .execute();
  const claimed: AlertRow[] = [];
  for (const { alert_id } of due) {
    const row = await db
      .updateTable('alerts')
      .set({ lease_owner: claim.owner, lease_expires_at: now + claim.leaseMs })
      .where('alert_id', '=', alert_id)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
      .returningAll()
      .executeTakeFirst();
    if (row !== undefined) claimed.push(row);
  }
  return claimed;
}

/** Records a send: sent, to be tried again at `retryAt`, or failed for good (`retryAt` null). */
export async function recordAlertSend(
  db: Kysely<Database>,
  alertId: string,
  outcome: { ok: true } | { ok: false; error: string; retryAt: number | null },
  now: number,
): Promise<void> {
  await db
    .updateTable('alerts')
    .set({
      attempts: sql`attempts + 1`,
      lease_owner: null,
      lease_expires_at: null,
      ...(outcome.ok
        ? { status: 'sent', sent_at: now, next_attempt_at: null, last_error: null }
        : {
            status: outcome.retryAt === null ? 'failed' : 'pending',
            next_attempt_at: outcome.retryAt,
            last_error: outcome.error,
          }),
    })
    .where('alert_id', '=', alertId)
    .execute();
}

/** When the next pending alert is due, or null. */
export async function nextAlertDueAt(db: Kysely<Database>): Promise<number | null> {
  const row = await db
    .selectFrom('alerts')
    .select((eb) => eb.fn.min('next_attempt_at').as('due'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return row?.due ?? null;
}

/** Alerts of these accounts, newest first (keyset on created_at, alert_id). */
export function listAlerts(
  db: Kysely<Database>,
  accountIds: number[],
  page: KeysetPage,
): Promise<AlertRow[]> {
  if (accountIds.length === 0) return Promise.resolve([]);
  let query = db.selectFrom('alerts').selectAll().where('account_id', 'in', accountIds);
  const [createdAt, alertId] = page.after ?? [];
  if (createdAt !== undefined && alertId !== undefined) {
    const at = Number(createdAt);
    query = query.where((eb) =>
      eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('alert_id', '<', alertId)])]),
    );
  }
  return query.orderBy('created_at', 'desc').orderBy('alert_id', 'desc').limit(page.limit).execute();
}

/** The health each connection was last seen in. */
export async function getHealthStates(db: Kysely<Database>): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('connection_health_states')
    .select(['subscription_id', 'health'])
    .execute();
  return new Map(rows.map((row) => [row.subscription_id, row.health]));
}

export async function setHealthState(
  db: Kysely<Database>,
  subscriptionId: string,
  health: string,
  now: number,
): Promise<void> {
  await db
    .insertInto('connection_health_states')
    .values({ subscription_id: subscriptionId, health, updated_at: now })
    .onConflict((oc) => oc.column('subscription_id').doUpdateSet({ health, updated_at: now }))
    .execute();
}
