import type { Kysely } from 'kysely';
import { RECOVERABLE_STATES, type RecoverableState, recoveryTurns } from '../domain/recovery.js';
import type { KeysetPage } from './page.js';
import type { Database, DeliveryRow, RecoveryRow } from './schema.js';

/**
 * Bulk recoveries: a job row per recovery, leased by one worker at a time like a delivery, and the
 * deliveries each one handled (`recovery_items`), written in the transaction that replays them.
 */

export interface RecoveryWindow {
  subscriptionId: string;
  sinceAt: number;
  untilAt: number;
  states: RecoverableState[];
}

function candidates(db: Kysely<Database>, window: RecoveryWindow) {
  return db
    .selectFrom('deliveries')
    .where('subscription_id', '=', window.subscriptionId)
    .where('dispatched_at', '>=', window.sinceAt)
    .where('dispatched_at', '<', window.untilAt)
    .where((eb) =>
      eb.or(
        window.states.map((state) => {
          const { status, notStarted } = RECOVERABLE_STATES[state];
          return notStarted
            ? eb.and([eb('status', '=', status), eb('not_started_at', 'is not', null)])
            : eb('status', '=', status);
        }),
      ),
    );
}

/** How many deliveries the window holds, and how many of them were not replayed yet. */
export async function countRecoverable(
  db: Kysely<Database>,
  window: RecoveryWindow,
): Promise<{ total: number; toReplay: number }> {
  const row = await candidates(db, window)
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.count<number>('delivery_id').filterWhere('replayed_by', 'is', null).as('to_replay'),
    ])
    .executeTakeFirst();
  return { total: row?.total ?? 0, toReplay: row?.to_replay ?? 0 };
}

/** The next deliveries of a recovery, in id (creation) order after the last one it handled. */
export function nextRecoverable(
  db: Kysely<Database>,
  window: RecoveryWindow,
  after: string | null,
  limit: number,
): Promise<DeliveryRow[]> {
  let query = candidates(db, window).selectAll().orderBy('delivery_id').limit(limit);
  if (after !== null) query = query.where('delivery_id', '>', after);
  return query.execute();
}

export function windowOf(recovery: RecoveryRow): RecoveryWindow {
  return {
    subscriptionId: recovery.subscription_id,
    sinceAt: recovery.since_at,
    untilAt: recovery.until_at,
    states: recovery.states.split(',') as RecoverableState[],
  };
}

export async function insertRecovery(
  db: Kysely<Database>,
  recovery: {
    recoveryId: string;
    window: RecoveryWindow;
    requestedBy: string;
    idempotencyKey: string | null;
    total: number;
  },
  now: number,
): Promise<RecoveryRow> {
  const row = {
    recovery_id: recovery.recoveryId,
    subscription_id: recovery.window.subscriptionId,
    requested_by: recovery.requestedBy,
    idempotency_key: recovery.idempotencyKey,
    states: recovery.window.states.join(','),
    since_at: recovery.window.sinceAt,
    until_at: recovery.window.untilAt,
    status: 'running' as const,
    total: recovery.total,
    replayed: 0,
    skipped: 0,
    position: null,
    lease_owner: null,
    lease_expires_at: null,
    turn_at: null,
    created_at: now,
    updated_at: now,
    finished_at: null,
  };
  await db.insertInto('recoveries').values(row).execute();
  return row;
}

export function getRecovery(db: Kysely<Database>, recoveryId: string): Promise<RecoveryRow | undefined> {
  return db.selectFrom('recoveries').selectAll().where('recovery_id', '=', recoveryId).executeTakeFirst();
}

export function findRecoveryByKey(
  db: Kysely<Database>,
  key: { requestedBy: string; subscriptionId: string; idempotencyKey: string },
): Promise<RecoveryRow | undefined> {
  return db
    .selectFrom('recoveries')
    .selectAll()
    .where('requested_by', '=', key.requestedBy)
    .where('subscription_id', '=', key.subscriptionId)
    .where('idempotency_key', '=', key.idempotencyKey)
    .executeTakeFirst();
}

export function findRunningRecovery(
  db: Kysely<Database>,
  subscriptionId: string,
): Promise<RecoveryRow | undefined> {
  return db
    .selectFrom('recoveries')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'running')
    .executeTakeFirst();
}

/** A connection's recoveries, newest first. */
export function listRecoveries(
  db: Kysely<Database>,
  subscriptionId: string,
  page: KeysetPage,
): Promise<RecoveryRow[]> {
  let query = db
    .selectFrom('recoveries')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .orderBy('recovery_id', 'desc')
    .limit(page.limit);
  if (page.after) query = query.where('recovery_id', '<', page.after[0]!);
  return query.execute();
}

/**
 * Takes the running recovery whose turn it is (domain/recovery.ts `recoveryTurns`) for one batch:
 * its lease is `owner`'s and its turn starts now. The conditional update is the claim: two workers
 * never both win the same row; the loser tries the next in turn.
 */
export async function claimRecovery(
  db: Kysely<Database>,
  owner: string,
  now: number,
  leaseMs: number,
): Promise<RecoveryRow | undefined> {
  const running = await db
    .selectFrom('recoveries')
    .select(['recovery_id', 'turn_at', 'created_at', 'lease_owner', 'lease_expires_at'])
    .where('status', '=', 'running')
    .execute();
  const turns = recoveryTurns(
    running.map((row) => ({
      recoveryId: row.recovery_id,
      turnAt: row.turn_at,
      createdAt: row.created_at,
      leaseOwner: row.lease_owner,
      leaseExpiresAt: row.lease_expires_at,
    })),
    owner,
    now,
  );
  for (const { recoveryId } of turns) {
    const claimed = await db
      .updateTable('recoveries')
      .set({ lease_owner: owner, lease_expires_at: now + leaseMs, turn_at: now, updated_at: now })
      .where('recovery_id', '=', recoveryId)
      .where('status', '=', 'running')
      .where((eb) =>
        eb.or([
          eb('lease_owner', '=', owner),
          eb('lease_expires_at', 'is', null),
          eb('lease_expires_at', '<=', now),
        ]),
      )
      .returningAll()
      .executeTakeFirst();
    if (claimed) return claimed;
  }
  return undefined;
}

/**
 * Renews `owner`'s lease, inside the transaction that handles the next delivery; false when the
 * recovery was cancelled or another worker took it over, so nothing more is done for it here.
 * The update also locks the row until that transaction ends: a cancel waits for it.
 */
export async function holdRecovery(
  db: Kysely<Database>,
  recoveryId: string,
  owner: string,
  now: number,
  leaseMs: number,
): Promise<boolean> {
  const held = await db
    .updateTable('recoveries')
    .set({ lease_expires_at: now + leaseMs, updated_at: now })
    .where('recovery_id', '=', recoveryId)
    .where('status', '=', 'running')
    .where('lease_owner', '=', owner)
    .returning('recovery_id')
    .executeTakeFirst();
  return held !== undefined;
}

/** Records what happened to one delivery and moves the recovery past it. */
export async function recordRecoveryItem(
  db: Kysely<Database>,
  item: { recoveryId: string; deliveryId: string; outcome: 'replayed' | 'skipped'; replayId: string | null },
  now: number,
): Promise<void> {
  await db
    .insertInto('recovery_items')
    .values({
      recovery_id: item.recoveryId,
      delivery_id: item.deliveryId,
      outcome: item.outcome,
      replay_id: item.replayId,
      created_at: now,
    })
    .execute();
  await db
    .updateTable('recoveries')
    .set((eb) => ({
      position: item.deliveryId,
      ...(item.outcome === 'replayed'
        ? { replayed: eb('replayed', '+', 1) }
        : { skipped: eb('skipped', '+', 1) }),
      updated_at: now,
    }))
    .where('recovery_id', '=', item.recoveryId)
    .execute();
}

export function wasHandled(db: Kysely<Database>, recoveryId: string, deliveryId: string): Promise<boolean> {
  return db
    .selectFrom('recovery_items')
    .select('delivery_id')
    .where('recovery_id', '=', recoveryId)
    .where('delivery_id', '=', deliveryId)
    .executeTakeFirst()
    .then((row) => row !== undefined);
}

/** Ends a running recovery: completed by its worker, or cancelled by a person. */
export async function finishRecovery(
  db: Kysely<Database>,
  recoveryId: string,
  status: 'completed' | 'cancelled',
  now: number,
  owner?: string,
): Promise<boolean> {
  let query = db
    .updateTable('recoveries')
    .set({ status, finished_at: now, lease_owner: null, lease_expires_at: null, updated_at: now })
    .where('recovery_id', '=', recoveryId)
    .where('status', '=', 'running');
  if (owner !== undefined) query = query.where('lease_owner', '=', owner);
  return (await query.returning('recovery_id').executeTakeFirst()) !== undefined;
}
