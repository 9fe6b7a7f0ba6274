import type { Kysely } from 'kysely';
import { type Metrics, noMetrics } from '../metrics/metrics.js';
import { claimWithContext, nextDeliveryDueAt, releaseClaims } from '../store/deliveries/index.js';
import type { Database } from '../store/schema.js';
import { noTracer, type Tracer } from '../tracing/tracer.js';
import { type AttemptOptions, createAttempt } from './dispatch-attempt.js';
import { createDispatchPool } from './dispatch-pool.js';
import type { DeliveryHandoff } from './handoff.js';

/**
 * The dispatcher: claim due deliveries with a lease → call `repository_dispatch` (or, for
 * a subscription delivering by `workflow_dispatch`, the workflow's dispatch) → record the
 * attempt and the new state. Non-durable deliveries get exactly one attempt; durable ones are
 * retried on the schedule until GitHub accepts them or the schedule runs out. A `workflow_dispatch`
 * GitHub answers with its run is recorded with that run, and — durable, without completion
 * tracking — handed to the run follower (run-follower.ts) through the store.
 *
 * This module wires three parts: the attempt (dispatch-attempt.ts: pace → prepare → call → record), the
 * pool (dispatch-pool.ts: slots, per-installation caps, the handoff's reservations) and the claim
 * that fills the pool from the store.
 */
/**
 * What the dispatcher is given: what each attempt needs (AttemptOptions, with the metrics and
 * tracer optional here) and the pool's bounds.
 */
export interface DispatcherOptions
  extends Omit<AttemptOptions, 'requestTimeoutMs' | 'metrics' | 'tracer' | 'onRequeued'> {
  leaseMs?: number;
  /** GitHub calls this worker has in flight at most (the pool); default 64. */
  concurrency?: number;
  /** Of those, at most this many for one consumer installation; default 8. */
  installationConcurrency?: number;
  /** Called when a call finished and the pool has room again (wakes the dispatch loop). */
  onCapacity?: () => void;
  requestTimeoutMs?: number;
  metrics?: Pick<
    Metrics,
    'dispatchAttempted' | 'endToEnd' | 'pacingDelayed' | 'leaseLost' | 'dispatchStarted'
  >;
  /** One span per attempt, under the delivery's; its context goes to the consumer (default: none). */
  tracer?: Tracer;
}

export interface Dispatcher extends DeliveryHandoff {
  /**
   * Fills the pool: claims as many due deliveries as it has room for and starts their attempts
   * without waiting for them; returns how many it started (the dispatch loop's pass).
   */
  fill(): Promise<number>;
  /** Claims and attempts one pool's worth of due deliveries and waits for them; returns how many. */
  dispatchDue(): Promise<number>;
  /**
   * More deliveries may be waiting to be claimed: one was created or replayed, here or by another
   * process (the `deliveries` wake-up). The poll and the next-due timer need no hint: every pass
   * they start claims.
   */
  hint(): void;
  /**
   * Whether another pass could claim anything right now: false once a claim saw every due
   * delivery it may take and nothing was hinted since (the dispatch loop then sleeps instead of
   * claiming again).
   */
  mayClaimMore(): boolean;
  /** When the next delivery this worker could start becomes due (null: none, or the pool is full). */
  nextDueAt(): Promise<number | null>;
  /** Resolves once no attempt is in flight. */
  idle(): Promise<void>;
  /**
   * Takes a slot of the pool and of the consumer installation for another call to GitHub (the run
   * follower's reads), or null when either is full; the function gives it back.
   */
  borrowSlot(consumerAccountId: number): (() => void) | null;
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { store, clock } = options;
  const leaseMs = options.leaseMs ?? 60_000;
  const metrics = options.metrics ?? noMetrics;
  const poolSize = options.concurrency ?? 64;
  const pool = createDispatchPool({
    size: poolSize,
    perInstallation: Math.min(options.installationConcurrency ?? 8, poolSize),
    run: ({ row, context }, callEnded) => attempt(row, context, callEnded),
    logger: options.logger,
    metrics,
    onCapacity: options.onCapacity,
  });
  const attempt = createAttempt({
    ...options,
    store,
    clock,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    metrics,
    tracer: options.tracer ?? noTracer,
    // Back in the queue, due later (a retry, a pacing slot): the loop must look for it again.
    onRequeued: () => pool.hint(),
  });
  /** When the last claim looked: what was due then and not claimed is over a cap (see nextDueAt). */
  let lastClaimAt: number | null = null;

  async function fill(): Promise<Array<Promise<void>>> {
    // A pass claims as many deliveries as the pool has free slots, and the claim itself takes no
    // more of an installation's than its free slots (so none comes back to be released, and the
    // calls that ended across many installations since the last pass are refilled in one
    // statement). Installations at their cap are left out of the claim's scan altogether.
    const room = pool.room();
    if (room <= 0) return [];
    const { skipAccounts, inFlight } = pool.claimLimits();
    const now = clock.now();
    lastClaimAt = now;
    const claimed = pool.beginClaim();
    const claim = async (trx: Kysely<Database>) => {
      const { claimed, ...learned } = await claimWithContext(trx, store.dialect, {
        owner: options.workerId,
        now,
        leaseMs,
        limit: room,
        skipAccounts,
        perInstallation: pool.perInstallation,
        inFlight,
      });
      // The claim keeps to each installation's free slots as they were when it was sized; should a
      // row still be over its cap, give it back now rather than hold its lease while it waits.
      const { kept, returned } = pool.withinCaps(claimed);
      await releaseClaims(trx, options.workerId, returned);
      return { kept, learned };
    };
    // On PostgreSQL the claim is one statement, atomic without a transaction around it (BEGIN and
    // COMMIT were two of its three round trips); a release that follows needs no atomicity with it,
    // as a worker dying in between leaves leases that expire like any other. SQLite's writes go
    // through the group commit's transactions.
    const { kept, learned } =
      store.dialect === 'postgres' ? await claim(store.db) : await store.transaction(claim);
    claimed(learned);
    return kept.map((delivery) => pool.startClaimed(delivery));
  }

  return {
    async fill() {
      return (await fill()).length;
    },
    async dispatchDue() {
      const started = await fill();
      await Promise.all(started);
      return started.length;
    },
    hint: pool.hint,
    mayClaimMore: pool.mayClaimMore,
    reserve(consumerAccountId) {
      if (!pool.take(consumerAccountId)) return null;
      return { owner: options.workerId, expiresAt: clock.now() + leaseMs };
    },
    start: pool.startReserved,
    release: pool.release,
    async nextDueAt() {
      if (pool.full()) return null;
      return nextDeliveryDueAt(store.db, lastClaimAt ?? clock.now());
    },
    idle: pool.idle,
    borrowSlot(consumerAccountId) {
      if (!pool.take(consumerAccountId)) return null;
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        pool.release([consumerAccountId]);
      };
    },
  };
}
