import type { Kysely } from 'kysely';
import type { SqlDialect } from './engine/dialect.js';
import type { Database, DeliveryStatus } from './schema.js';

/**
 * The follow queue (domain/run-following.ts): deliveries whose consumer run Zekt reads itself are
 * the ones with `run_follow_at`, due when it is reached. A follower claims due ones by writing its
 * lease into the delivery's lease columns (free once the dispatch was recorded: the dispatch claim
 * takes pending deliveries only), reads the run, and records what it found only while it still
 * holds the lease; a lease that expires (the process died mid-read) makes the delivery claimable
 * again. Every query goes through the partial index `deliveries_run_follow`.
 */

/** A claimed delivery with what a read of its run needs. */
export interface FollowedRun {
  deliveryId: string;
  consumerAccountId: number;
  status: DeliveryStatus;
  runId: number;
  /** Reads made so far. */
  reads: number;
  /** When the run became known (GitHub's answer to the dispatch). */
  since: number;
  /** Put back for pacing: its installation's slot is already reserved (do not take another). */
  slotReserved: boolean;
  installationId: number | null;
  uninstalledAt: number | null;
  /** `owner/repo` of the consumer repository; null when its row is gone. */
  repository: string | null;
}

/**
 * Claims up to `limit` due followed deliveries, oldest due first, leasing them to `owner` until
 * `now + leaseMs`. On PostgreSQL the rows are locked with `FOR UPDATE SKIP LOCKED`, so two workers
 * never take the same one and neither waits for the other.
 */
export async function claimRunsToFollow(
  db: Kysely<Database>,
  dialect: SqlDialect,
  options: { owner: string; now: number; leaseMs: number; limit: number },
): Promise<FollowedRun[]> {
  const { owner, now, leaseMs, limit } = options;
  let due = db
    .selectFrom('deliveries')
    .select('delivery_id')
    .where('run_follow_at', 'is not', null)
    .where('run_follow_at', '<=', now)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]))
    .orderBy('run_follow_at')
    .limit(limit);
  if (dialect === 'postgres') due = due.forUpdate().skipLocked();
  const claimed = await db
    .updateTable('deliveries')
    .set({ lease_owner: owner, lease_expires_at: now + leaseMs })
    .where('delivery_id', 'in', due)
    .returning('delivery_id')
    .execute();
  if (claimed.length === 0) return [];
  const rows = await db
    .selectFrom('deliveries as d')
    .leftJoin('accounts as a', 'a.account_id', 'd.consumer_account_id')
    .leftJoin('repositories as r', 'r.repository_id', 'd.consumer_repository_id')
    .select([
      'd.delivery_id',
      'd.consumer_account_id',
      'd.status',
      'd.consumer_run_id',
      'd.run_follow_reads',
      'd.run_seen_at',
      'd.dispatched_at',
      'd.slot_reserved',
      'a.installation_id',
      'a.uninstalled_at',
      'r.full_name',
    ])
    .where(
      'd.delivery_id',
      'in',
      claimed.map((row) => row.delivery_id),
    )
    .where('d.lease_owner', '=', owner)
    .execute();
  return rows.flatMap((row) =>
    row.consumer_run_id === null
      ? []
      : [
          {
            deliveryId: row.delivery_id,
            consumerAccountId: row.consumer_account_id,
            status: row.status,
            runId: Number(row.consumer_run_id),
            reads: row.run_follow_reads,
            since: Number(row.run_seen_at ?? row.dispatched_at),
            slotReserved: Boolean(row.slot_reserved),
            installationId: row.installation_id ?? null,
            uninstalledAt: row.uninstalled_at ?? null,
            repository: row.full_name ?? null,
          },
        ],
  );
}

/**
 * Records a read (or a decision not to read), releasing the lease: the run is read next at
 * `followAt`, or no longer followed (null). `read`: a call to GitHub was made (it is counted).
 * `slotReserved`: put back until the installation's pacing slot reserved for it (the next claim
 * uses that slot instead of reserving another, which would push the read further every time).
 * Returns false, writing nothing, when `owner` no longer holds the lease.
 */
export async function recordRunFollow(
  db: Kysely<Database>,
  input: {
    deliveryId: string;
    owner: string;
    followAt: number | null;
    read: boolean;
    slotReserved?: boolean;
    now: number;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('deliveries')
    .set((eb) => ({
      run_follow_at: input.followAt === null ? null : Math.ceil(input.followAt),
      run_follow_reads: input.read ? eb('run_follow_reads', '+', 1) : eb.ref('run_follow_reads'),
      slot_reserved: input.slotReserved ?? false,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: input.now,
    }))
    .where('delivery_id', '=', input.deliveryId)
    .where('lease_owner', '=', input.owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The delivery's run is no longer read (its delivery is final). */
export async function stopFollowing(db: Kysely<Database>, deliveryId: string): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({ run_follow_at: null })
    .where('delivery_id', '=', deliveryId)
    .execute();
}

/** When the next followed run is due to be read (null: none is followed). */
export async function nextRunFollowAt(db: Kysely<Database>): Promise<number | null> {
  const row = await db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.min('run_follow_at').as('due'))
    .where('run_follow_at', 'is not', null)
    .executeTakeFirst();
  return row?.due == null ? null : Number(row.due);
}

/**
 * Completion tracking was switched off for a repository: the runs GitHub named for its durable
 * deliveries still under way would no longer be reported by anyone, so Zekt follows them from now
 * on (without COMPLETION, Zekt reads the run). Returns how many it took on.
 */
export async function followRunsOfRepository(
  db: Kysely<Database>,
  repositoryId: number,
  now: number,
): Promise<number> {
  const result = await db
    .updateTable('deliveries')
    .set({ run_follow_at: now, updated_at: now })
    .where('consumer_repository_id', '=', repositoryId)
    .where('consumer_run_id', 'is not', null)
    .where('run_follow_at', 'is', null)
    .where('durable', '=', true)
    .where('status', 'in', ['Dispatched', 'Confirmed'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
