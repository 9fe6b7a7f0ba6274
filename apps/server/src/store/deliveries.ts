import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import { newId } from '../domain/ids.js';
import { type UsageCounter, usageDay } from '../domain/usage.js';
import { hotQuery, hotQueryFamily } from './engine/compiled-query.js';
import type { SqlDialect } from './engine/dialect.js';
import type { Database, DeliveryAttemptRow, DeliveryRow, DeliveryUpdate, NewDelivery } from './schema.js';
import type { Store } from './store.js';
import { countUsage, usageShard } from './usage.js';

/**
 * Deliveries are the dispatch queue. A worker claims due rows by writing its lease; it records the
 * outcome only while it still holds the lease, so a worker whose lease expired (it stalled or died)
 * can never overwrite the work of the one that took over.
 */

/** Who a delivery is for; everything else starts in the same state for every new delivery. */
export interface DeliveryIdentity {
  deliveryId: string;
  eventId: string;
  subscriptionId: string;
  serviceId: string;
  providerAccountId: number;
  providerRepositoryId: number;
  consumerAccountId: number;
  consumerRepositoryId: number;
  correlationId: string;
  runAttempt: number;
  eventType: string;
  durable: boolean;
  retryNumber?: number;
  replayOf?: string | null;
  /** The delivery span's context (tracing/spans.ts); null: not traced. */
  traceParent?: string | null;
  /** The schema version its message was checked against (`client_payload.zekt.schemaVersion`). */
  schemaVersion?: number | null;
}

/** A new delivery: Dispatched, due now, never attempted (SPEC 5: DispatchedAt is set at creation). */
export function newDeliveryRow(identity: DeliveryIdentity, now: number): NewDelivery {
  return {
    delivery_id: identity.deliveryId,
    event_id: identity.eventId,
    subscription_id: identity.subscriptionId,
    service_id: identity.serviceId,
    provider_account_id: identity.providerAccountId,
    provider_repository_id: identity.providerRepositoryId,
    consumer_account_id: identity.consumerAccountId,
    consumer_repository_id: identity.consumerRepositoryId,
    correlation_id: identity.correlationId,
    run_attempt: identity.runAttempt,
    event_type: identity.eventType,
    durable: identity.durable,
    status: 'Dispatched',
    dispatch_state: 'pending',
    attempt_count: 0,
    next_attempt_at: now,
    lease_owner: null,
    lease_expires_at: null,
    dispatched_at: now,
    confirmed_at: null,
    completed_at: null,
    consumer_conclusion: null,
    is_finalized: false,
    confirmation_attempts: 0,
    retry_number: identity.retryNumber ?? 0,
    platform_response: null,
    failure_reason: null,
    replay_of: identity.replayOf ?? null,
    replayed_by: null,
    payload_by_reference: false,
    slot_reserved: false,
    awaiting_start_since: null,
    not_started_at: null,
    run_seen_at: null,
    consumer_run_id: null,
    consumer_run_url: null,
    consumer_run_html_url: null,
    run_follow_at: null,
    run_follow_reads: 0,
    updated_at: now,
    trace_parent: identity.traceParent ?? null,
    schema_version: identity.schemaVersion ?? null,
  };
}

export async function insertDeliveries(db: Kysely<Database>, deliveries: NewDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  const columns = Object.keys(deliveries[0] as NewDelivery);
  // Kysely leaves undefined values out of the SQL: such rows take the builder.
  const sameColumns = deliveries.every(
    (row) =>
      Object.keys(row).length === columns.length &&
      columns.every((c) => (row as Record<string, unknown>)[c] !== undefined),
  );
  if (!sameColumns || deliveries.length > MAX_HOT_DELIVERIES) {
    await db.insertInto('deliveries').values(deliveries).execute();
    return;
  }
  // An event routes to a handful of subscriptions: one compiled statement per row count and columns.
  const query = insertDeliveriesQuery({ count: deliveries.length, columns });
  const params: Record<string, unknown> = {};
  deliveries.forEach((row, i) => {
    for (const c of columns) params[`${i}.${c}`] = (row as Record<string, unknown>)[c];
  });
  await query.execute(db, params);
}

const MAX_HOT_DELIVERIES = 16;
const insertDeliveriesQuery = hotQueryFamily(
  ({ count, columns }: { count: number; columns: string[] }) => `${count}:${columns.join(',')}`,
  ({ count, columns }) =>
    (db, p: Record<string, unknown>) =>
      db
        .insertInto('deliveries')
        .values(
          Array.from(
            { length: count },
            (_, i) => Object.fromEntries(columns.map((c) => [c, p[`${i}.${c}`]])) as NewDelivery,
          ),
        ),
);

export interface ClaimOptions {
  owner: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** Consumer accounts (installations) whose deliveries are left for later: this worker has enough of theirs in flight. */
  skipAccounts?: readonly number[];
  /**
   * At most this many of one installation's deliveries in flight at once (unset: no cap). With
   * `inFlight`, a claim takes no more of an installation's deliveries than it has free slots.
   */
  perInstallation?: number;
  /** The claiming worker's calls in flight per consumer account (installation), where not zero. */
  inFlight?: ReadonlyMap<number, number>;
}

/**
 * Claims up to `limit` deliveries that are due (pending, `next_attempt_at` reached, no live
 * lease) and counts the attempt they are claimed for, oldest due first, and at most
 * `perInstallation - inFlight` of one installation's.
 *
 * One statement serves every installation with free slots, so a worker whose calls end one by one
 * across many installations claims them back in one round trip rather than one claim per free slot
 * (the dispatcher claimed one row per statement while every installation was one call
 * short of its cap, and a worker could not refill 64 slots of 250 ms calls in time on
 * PostgreSQL). The oldest due deliveries are read first (`scan` of them, skipped installations
 * left out by the index scan), ranked within their installation, and only the ones within their
 * installation's free slots are locked: on PostgreSQL `FOR UPDATE SKIP LOCKED` at that level
 * rechecks that each is still due and unleased, so two workers never take the same delivery and
 * neither waits for the other.
 */
export async function claimDueDeliveries(
  db: Kysely<Database>,
  dialect: SqlDialect,
  options: ClaimOptions,
): Promise<DeliveryRow[]> {
  if (dialect !== 'postgres') {
    const claim = async (trx: Kysely<Database>) => {
      const { claimed } = await claimIdsOnSqlite(trx, options);
      return claimed.length === 0 ? [] : selectDeliveries(trx, claimed);
    };
    return db.isTransaction ? claim(db) : db.transaction().execute(claim);
  }
  const claim = claimOf(dialect, options);
  return (await claimQuery(claim).execute(db, claim.params)).rows as DeliveryRow[];
}

/** What a claim took, and what it learned of the due deliveries it left. */
export interface ClaimOutcome<T> {
  claimed: T[];
  /**
   * The claim saw every due delivery it may take and took them all: another finds nothing until a
   * delivery is created or becomes due, or a slot of one of `atCap` frees. False when that is not
   * known (PostgreSQL's claim; a claim that filled its room or read as many rows as it reads).
   */
  sawAll: boolean;
  /** Installations whose due deliveries the claim left for want of a free slot (or skipped). */
  atCap: number[];
}

/**
 * SQLite's claim, inside the caller's transaction: the ids of the deliveries it leased.
 *
 * SQLite has one writer, so what a transaction reads as due is still due when it writes: the
 * claim is a read of the oldest due deliveries (one range of `deliveries_due`), the choice of
 * those within each installation's free slots (`withinFreeSlots`), and an update by primary key.
 * The single statement PostgreSQL needs to be safe among workers (a window function, two sorts in
 * temporary B-trees, RETURNING every column) cost 180–400 µs per claim on SQLite, the costliest
 * statement of the durable path; the read and the update cost ~30 µs together.
 */
export async function claimIdsOnSqlite(
  db: Kysely<Database>,
  options: ClaimOptions,
): Promise<ClaimOutcome<string>> {
  const skip = padded(options.skipAccounts ?? [], NO_ACCOUNT);
  const due = dueQuery(skip.length);
  const scan = scanSize(options);
  const params: Record<string, unknown> = { now: options.now, scan };
  skip.forEach((account, i) => {
    params[`skip${i}`] = account;
  });
  const scanned = (await due.execute(db, params)).rows;
  const taken = withinFreeSlots(scanned, options);
  const chosen = taken.map((r) => r.delivery_id);
  const atCap = new Set(options.skipAccounts);
  if (taken.length < scanned.length) {
    const took = new Set(chosen);
    for (const row of scanned) if (!took.has(row.delivery_id)) atCap.add(row.consumer_account_id);
  }
  const outcome = {
    claimed: chosen,
    sawAll: scanned.length < scan && chosen.length < options.limit,
    atCap: [...atCap],
  };
  if (chosen.length === 0) return outcome;
  const ids = padded(chosen, NO_DELIVERY);
  const lease = leaseQuery(ids.length);
  const values: Record<string, unknown> = {
    owner: options.owner,
    leaseExpiresAt: options.now + options.leaseMs,
    now: options.now,
  };
  ids.forEach((id, i) => {
    values[`id${i}`] = id;
  });
  await lease.execute(db, values);
  return outcome;
}

/**
 * The deliveries a claim takes of those due, oldest first: at most `limit`, and no more of one
 * installation's than its free slots (`perInstallation` less what the worker has `inFlight`).
 * PostgreSQL's claim applies the same rule in SQL (`rank <= cap - used`).
 */
export function withinFreeSlots<T extends { consumer_account_id: number }>(
  due: readonly T[],
  options: Pick<ClaimOptions, 'limit' | 'perInstallation' | 'inFlight'>,
): T[] {
  const taken = new Map<number, number>();
  const chosen: T[] = [];
  for (const row of due) {
    if (chosen.length >= options.limit) break;
    const account = row.consumer_account_id;
    const used = taken.get(account) ?? options.inFlight?.get(account) ?? 0;
    if (options.perInstallation !== undefined && used >= options.perInstallation) continue;
    taken.set(account, used + 1);
    chosen.push(row);
  }
  return chosen;
}

/**
 * How many of the oldest due deliveries a claim reads: twice what one installation can take.
 * Rows past an installation's free slots are read for nothing, and when one installation owns the
 * backlog (the usual case under load) every row past its few free slots is; reading four times the
 * pool's room made the claim 13 % of the server's CPU on SQLite. A pass that could take more is
 * followed by another straight away (the dispatch loop goes on while passes find work), so a small
 * read costs passes, not throughput.
 */
function scanSize(options: ClaimOptions): number {
  return 2 * Math.min(options.limit, options.perInstallation ?? options.limit);
}

const dueAndFree = <QB extends SelectQueryBuilder<Database, 'deliveries', object>>(qb: QB, now: number): QB =>
  qb
    .where('dispatch_state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)])) as QB;

const dueQuery = hotQueryFamily(
  (skipped: number) => skipped,
  (skipped) => (db, p: Record<string, unknown>) => {
    let due = dueAndFree(
      db.selectFrom('deliveries').select(['delivery_id', 'consumer_account_id']),
      p.now as number,
    );
    if (skipped > 0) {
      const accounts = Array.from({ length: skipped }, (_, i) => p[`skip${i}`] as number);
      due = due.where('consumer_account_id', 'not in', accounts);
    }
    return due.orderBy('next_attempt_at').limit(p.scan as number);
  },
);

const leaseQuery = hotQueryFamily(
  (size: number) => size,
  (size) => (db, p: Record<string, unknown>) =>
    db
      .updateTable('deliveries')
      .set((eb) => ({
        lease_owner: p.owner as string,
        lease_expires_at: p.leaseExpiresAt as number,
        attempt_count: eb('attempt_count', '+', 1),
        updated_at: p.now as number,
      }))
      .where(
        'delivery_id',
        'in',
        Array.from({ length: size }, (_, i) => p[`id${i}`] as string),
      ),
);

/** Delivery ids are never empty: this one pads lists of ids. */
export const NO_DELIVERY = '';

function selectDeliveries(db: Kysely<Database>, ids: readonly string[]): Promise<DeliveryRow[]> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('delivery_id', 'in', [...ids])
    .orderBy('next_attempt_at')
    .execute();
}

/** What decides a claim's SQL: its dialect and the (padded) lengths of its lists. */
export interface ClaimShape {
  dialect: SqlDialect;
  skipped: number;
  /** How many installations' in-flight counts are bound; null: no per-installation cap. */
  capped: number | null;
}

/** A claim's shape, the key its compiled SQL is kept under, and its parameters. */
export function claimOf(
  dialect: SqlDialect,
  options: ClaimOptions,
): { shape: ClaimShape; key: string; params: Record<string, unknown> } {
  // The lists are padded to a power of two with an account id no installation has, so the claim is
  // compiled once per dialect and pair of sizes, not once per length (an `in` list and a `case`
  // bind each element).
  const skip = padded(options.skipAccounts ?? [], NO_ACCOUNT);
  const inFlight = padded([...(options.inFlight ?? new Map<number, number>())], [NO_ACCOUNT, 0] as const);
  const capped = options.perInstallation === undefined ? null : inFlight.length;
  const params: Record<string, unknown> = {
    now: options.now,
    limit: options.limit,
    scan: scanSize(options),
    owner: options.owner,
    leaseExpiresAt: options.now + options.leaseMs,
  };
  skip.forEach((account, i) => {
    params[`skip${i}`] = account;
  });
  if (capped !== null) {
    params.cap = options.perInstallation;
    inFlight.forEach(([account, used], i) => {
      params[`account${i}`] = account;
      params[`used${i}`] = used;
    });
  }
  return {
    shape: { dialect, skipped: skip.length, capped },
    key: `${dialect}:${skip.length}:${capped ?? 'uncapped'}`,
    params,
  };
}

/** GitHub account ids are positive: this one pads lists of accounts. */
const NO_ACCOUNT = -1;

/** `items` padded to a power of two with `filler`: one compiled statement per size, not per length. */
export function padded<T>(items: readonly T[], filler: T): T[] {
  if (items.length === 0) return [];
  let size = 1;
  while (size < items.length) size *= 2;
  return [...items, ...Array.from({ length: size - items.length }, () => filler)];
}

/**
 * PostgreSQL's claim, one UPDATE … RETURNING built for hotQuery (every value a named parameter of
 * `p`): atomic among workers without a transaction around it.
 */
export function buildClaim(db: Kysely<Database>, p: Record<string, unknown>, shape: ClaimShape) {
  const { skipped, capped } = shape;
  const now = p.now as number;
  let oldest = dueAndFree(
    db.selectFrom('deliveries').select(['delivery_id', 'consumer_account_id', 'next_attempt_at']),
    now,
  )
    .orderBy('next_attempt_at')
    .limit(p.scan as number);
  if (skipped > 0) {
    const accounts = Array.from({ length: skipped }, (_, i) => p[`skip${i}`] as number);
    oldest = oldest.where('consumer_account_id', 'not in', accounts);
  }
  let chosen: SelectQueryBuilder<Database, 'deliveries', { delivery_id: string }>;
  if (capped === null) {
    chosen = db
      .selectFrom(oldest.as('due'))
      .select('due.delivery_id')
      .orderBy('due.next_attempt_at')
      .limit(p.limit as number) as never;
  } else {
    const ranked = db.selectFrom(oldest.as('due')).select([
      'due.delivery_id',
      'due.next_attempt_at',
      sql<number>`row_number() over (partition by due.consumer_account_id order by due.next_attempt_at, due.delivery_id)`.as(
        'rank',
      ),
      (capped === 0
        ? sql<number>`0`
        : sql<number>`case due.consumer_account_id ${sql.join(
            Array.from(
              { length: capped },
              (_, i) => sql`when ${p[`account${i}`]} then cast(${p[`used${i}`]} as integer)`,
            ),
            sql` `,
          )} else 0 end`
      ).as('used'),
    ]);
    chosen = db
      .selectFrom(ranked.as('ranked'))
      .select('ranked.delivery_id')
      .where(sql<boolean>`ranked.rank <= cast(${p.cap} as integer) - ranked.used`)
      .orderBy('ranked.next_attempt_at')
      .limit(p.limit as number) as never;
  }
  // The chosen rows are locked at a level of their own, which rechecks that each is still due and
  // unleased once locked (another worker may have claimed it since the snapshot).
  const locked = dueAndFree(db.selectFrom('deliveries').select('delivery_id'), now)
    .where('delivery_id', 'in', chosen)
    .forUpdate()
    .skipLocked();
  return db
    .updateTable('deliveries')
    .set((eb) => ({
      lease_owner: p.owner as string,
      lease_expires_at: p.leaseExpiresAt as number,
      attempt_count: eb('attempt_count', '+', 1),
      updated_at: now,
    }))
    .where('delivery_id', 'in', locked)
    .returningAll();
}

const claimQuery = hotQueryFamily(
  (claim: ReturnType<typeof claimOf>) => claim.key,
  (claim) => (db, p: Record<string, unknown>) => buildClaim(db, p, claim.shape),
);

/**
 * Gives claimed deliveries back untouched (their claim is not an attempt): the worker took more of
 * one installation's deliveries than it may have in flight at once.
 */
export async function releaseClaims(
  db: Kysely<Database>,
  owner: string,
  deliveryIds: readonly string[],
): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db
    .updateTable('deliveries')
    .set((eb) => ({ lease_owner: null, lease_expires_at: null, attempt_count: eb('attempt_count', '-', 1) }))
    .where('delivery_id', 'in', [...deliveryIds])
    .where('lease_owner', '=', owner)
    .execute();
}

export interface AttemptRecord {
  number: number;
  startedAt: number;
  durationMs: number;
  outcome: 'accepted' | 'failed';
  statusCode: number | null;
  errorCategory: string | null;
  errorMessage: string | null;
  responseHeaders: Record<string, string> | null;
}

/**
 * Records an attempt and the delivery's new state, releasing the lease. Returns false (and writes
 * nothing) when the caller no longer owns the lease. `awaitStartSince` starts the wait for the
 * consumer workflow (domain/not-started.ts) unless a report or a run seen by completion tracking
 * already moved the delivery on: a fast workflow can start before its dispatch's answer is recorded.
 */
export interface RecordAttemptInput {
  deliveryId: string;
  owner: string;
  attempt: AttemptRecord | null;
  update: DeliveryUpdate;
  awaitStartSince?: number | undefined;
}

/** The delivery's new state, only while `owner` holds its lease; returns its connection and consumer. */
function updateLeased(db: Kysely<Database>, input: RecordAttemptInput) {
  const since = input.awaitStartSince;
  return buildUpdateLeased(
    db,
    input.update,
    input.deliveryId,
    input.owner,
    since === undefined ? undefined : Math.trunc(since),
  );
}

function buildUpdateLeased(
  db: Kysely<Database>,
  update: DeliveryUpdate,
  deliveryId: string,
  owner: string,
  since: number | undefined,
) {
  return db
    .updateTable('deliveries')
    .set({
      ...update,
      lease_owner: null,
      lease_expires_at: null,
      ...(since === undefined
        ? {}
        : {
            // Bound, not inlined: a literal made every attempt's SQL text new, to be compiled and
            // prepared once per attempt (and it flushed the prepared-statement cache).
            awaiting_start_since: sql<
              number | null
            >`case when status = 'Dispatched' and confirmed_at is null and run_seen_at is null then cast(${since} as bigint) else null end`,
          }),
    })
    .where('delivery_id', '=', deliveryId)
    .where('lease_owner', '=', owner)
    .returning(['subscription_id', 'consumer_account_id']);
}

/**
 * `updateLeased` compiled once per shape: the columns an outcome writes (accepted, retried,
 * failed, put back for pacing) and whether the wait for the workflow starts. Each attempt used to
 * be built and compiled by Kysely anew, ~2 % of the server's CPU under `zekt bench`.
 */
function updateLeasedQuery(input: RecordAttemptInput) {
  const columns = Object.keys(input.update).filter(
    (column) => input.update[column as keyof DeliveryUpdate] !== undefined,
  );
  const waits = input.awaitStartSince !== undefined;
  const params: Record<string, unknown> = { deliveryId: input.deliveryId, owner: input.owner };
  for (const column of columns) params[column] = input.update[column as keyof DeliveryUpdate];
  if (waits) params.since = Math.trunc(input.awaitStartSince as number);
  return { query: updateLeasedQueries({ columns, waits }), params };
}

const updateLeasedQueries = hotQueryFamily(
  ({ columns, waits }: { columns: string[]; waits: boolean }) => `${columns.join(',')}|${waits}`,
  ({ columns, waits }) =>
    (db, p: Record<string, unknown>) =>
      buildUpdateLeased(
        db,
        Object.fromEntries(columns.map((column) => [column, p[column]])) as DeliveryUpdate,
        p.deliveryId as string,
        p.owner as string,
        waits ? (p.since as number) : undefined,
      ),
);

function attemptRow(deliveryId: string, subscriptionId: string, a: AttemptRecord) {
  return {
    attempt_id: newId('att', a.startedAt),
    delivery_id: deliveryId,
    subscription_id: subscriptionId,
    number: a.number,
    started_at: a.startedAt,
    duration_ms: a.durationMs,
    outcome: a.outcome,
    status_code: a.statusCode,
    error_category: a.errorCategory,
    error_message: a.errorMessage,
    response_headers: a.responseHeaders === null ? null : JSON.stringify(a.responseHeaders),
  };
}

/**
 * Records an attempt and the delivery's new state, releasing the lease. Returns false (and writes
 * nothing) when the caller no longer owns the lease. `awaitStartSince` starts the wait for the
 * consumer workflow (domain/not-started.ts) unless a report or a run seen by completion tracking
 * already moved the delivery on: a fast workflow can start before its dispatch's answer is recorded.
 */
export async function recordAttempt(db: Kysely<Database>, input: RecordAttemptInput): Promise<boolean> {
  return (await recordLeasedAttempt(db, input)) !== undefined;
}

async function recordLeasedAttempt(db: Kysely<Database>, input: RecordAttemptInput) {
  const { query, params } = updateLeasedQuery(input);
  const updated = (await query.execute(db, params)).rows[0];
  if (updated && input.attempt) {
    await insertAttemptQuery.execute(
      db,
      attemptRow(input.deliveryId, updated.subscription_id, input.attempt),
    );
  }
  return updated;
}

const insertAttemptQuery = hotQuery((db, p: ReturnType<typeof attemptRow>) =>
  db.insertInto('delivery_attempts').values({
    attempt_id: p.attempt_id,
    delivery_id: p.delivery_id,
    subscription_id: p.subscription_id,
    number: p.number,
    started_at: p.started_at,
    duration_ms: p.duration_ms,
    outcome: p.outcome,
    status_code: p.status_code,
    error_category: p.error_category,
    error_message: p.error_message,
    response_headers: p.response_headers,
  }),
);

/**
 * The dispatcher's end of an attempt: the delivery's new state, the attempt, and — when GitHub was
 * called — the consumer's `dispatchApiCalls` counter, all or nothing, committed before it returns.
 * On PostgreSQL that is one statement (data-modifying CTEs run atomically, and with no transaction
 * around them that is one round trip where BEGIN, three statements and COMMIT were five); on SQLite,
 * or with writes `alongside` (a rare exhausted delivery's alert), one transaction.
 */
export async function finishAttempt(
  store: Store,
  input: RecordAttemptInput & {
    dispatchCountedAt?: number | undefined;
    /** More writes that must commit with the attempt, only if it is recorded (a transaction then). */
    alongside?: ((trx: Kysely<Database>) => Promise<void>) | undefined;
  },
): Promise<boolean> {
  const countedAt = input.dispatchCountedAt;
  const alongside = input.alongside;
  if (store.dialect !== 'postgres' || alongside) {
    return store.transaction(async (trx) => {
      const updated = await recordLeasedAttempt(trx, input);
      if (updated && countedAt !== undefined) {
        await countUsage(trx, updated.consumer_account_id, 'dispatchApiCalls', countedAt);
      }
      if (updated) await alongside?.(trx);
      return updated !== undefined;
    });
  }
  const a = input.attempt;
  const row = a ? attemptRow(input.deliveryId, '', a) : null;
  const attempt = row
    ? sql`, attempt as (
        insert into delivery_attempts (attempt_id, delivery_id, subscription_id, number, started_at,
          duration_ms, outcome, status_code, error_category, error_message, response_headers)
        select ${row.attempt_id}, ${row.delivery_id}, subscription_id, ${row.number}::integer,
          ${row.started_at}::bigint, ${row.duration_ms}::integer, ${row.outcome}, ${row.status_code}::integer,
          ${row.error_category}::text, ${row.error_message}::text, ${row.response_headers}::text
        from updated)`
    : sql``;
  const usage =
    countedAt === undefined
      ? sql``
      : sql`, usage as (
        insert into usage_daily_shards (account_id, day, counter, shard, value)
        select consumer_account_id, ${usageDay(countedAt)}, ${'dispatchApiCalls' satisfies UsageCounter},
          ${usageShard()}::integer, 1 from updated
        on conflict (account_id, day, counter, shard) do update set value = usage_daily_shards.value + 1)`;
  const result = await sql<{ n: number }>`with updated as (${updateLeased(store.db, input)})${attempt}${usage}
    select count(*)::integer as n from updated`.execute(store.db);
  return Number(result.rows[0]?.n ?? 0) === 1;
}

export function getDelivery(db: Kysely<Database>, deliveryId: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('deliveries').selectAll().where('delivery_id', '=', deliveryId).executeTakeFirst();
}

export function listAttempts(db: Kysely<Database>, deliveryId: string): Promise<DeliveryAttemptRow[]> {
  return db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('number')
    .execute();
}

export function listDeliveriesOfEvent(db: Kysely<Database>, eventId: string): Promise<DeliveryRow[]> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('event_id', '=', eventId)
    .orderBy('delivery_id')
    .execute();
}

/** When the next pending delivery becomes due (null: nothing pending), leaving out some installations. */
/**
 * When the next pending delivery not yet due at `after` becomes due (null: none): one seek in
 * `deliveries_due`. Deliveries already due at `after` are not asked about: the caller's claim at
 * `after` took every one it could, and the rest belong to installations at their in-flight cap,
 * whose next free slot wakes the dispatcher itself. Leases held by a worker that died are not
 * asked about either: they are reclaimed by the next poll after they expire. This used to read
 * every pending delivery (the minimum of lease expiry and due time has no index), once per pass
 * with nothing to claim: with a backlog of thousands, that scan cost more than the claims did.
 */
export async function nextDeliveryDueAt(db: Kysely<Database>, after: number): Promise<number | null> {
  const row = (await nextDueQuery.execute(db, { after })).rows[0];
  return row?.due ?? null;
}

const nextDueQuery = hotQuery((db, p: { after: number }) =>
  db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.min('next_attempt_at').as('due'))
    .where('dispatch_state', '=', 'pending')
    .where('next_attempt_at', '>', p.after),
);

/**
 * The delivery a consumer's confirm/complete call is about (SPEC 6.2): the given delivery, or else
 * the newest non-final delivery of the correlation id to that repository, or else its newest final
 * one (so the caller learns it is final).
 */
export async function findConsumerDelivery(
  db: Kysely<Database>,
  lookup: { correlationId: string; consumerRepositoryId: number; deliveryId?: string | undefined },
): Promise<DeliveryRow | undefined> {
  const base = db
    .selectFrom('deliveries')
    .selectAll()
    .where('correlation_id', '=', lookup.correlationId)
    .where('consumer_repository_id', '=', lookup.consumerRepositoryId);
  if (lookup.deliveryId) return base.where('delivery_id', '=', lookup.deliveryId).executeTakeFirst();
  const open = await base
    .where('status', 'in', ['Dispatched', 'Confirmed'])
    .orderBy('delivery_id', 'desc')
    .executeTakeFirst();
  return open ?? base.orderBy('delivery_id', 'desc').executeTakeFirst();
}

/** Every delivery of a correlation id (the candidates a per-delivery token may belong to). */
export function deliveriesOfCorrelation(db: Kysely<Database>, correlationId: string): Promise<DeliveryRow[]> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('correlation_id', '=', correlationId)
    .orderBy('delivery_id', 'desc')
    .limit(100)
    .execute();
}

/**
 * Writes a state change only if the delivery is still in the state it was read in; returns false
 * when another writer (the completion webhook, a second call) got there first.
 */
export async function changeDeliveryState(
  db: Kysely<Database>,
  deliveryId: string,
  expected: { status: string; confirmationAttempts: number },
  update: DeliveryUpdate,
): Promise<boolean> {
  const result = await db
    .updateTable('deliveries')
    .set(update)
    .where('delivery_id', '=', deliveryId)
    .where('status', '=', expected.status as DeliveryRow['status'])
    .where('confirmation_attempts', '=', expected.confirmationAttempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
