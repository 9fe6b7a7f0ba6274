import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { isFinal } from '../domain/delivery-state.js';
import {
  followExpired,
  nextRunReadAt,
  RUN_FOLLOW_EXPIRED,
  type RunObservation,
  reportOfRun,
} from '../domain/run-following.js';
import type { GitHubClient, RunReadResult } from '../github/github-client.js';
import { reserveDispatchSlot } from '../store/pacing.js';
import {
  claimRunsToFollow,
  type FollowedRun,
  nextRunFollowAt,
  recordRunFollow,
  stopFollowing,
} from '../store/run-following.js';
import type { Store } from '../store/store.js';
import { applyConsumerReportIn, type ConsumerReport } from './consumer-transitions.js';

/**
 * The run follower (the rules are domain/run-following.ts's): for durable
 * `workflow_dispatch` deliveries without completion tracking, reads the consumer run GitHub named
 * at dispatch (`GET …/actions/runs/{run_id}`) until it ends, and records Confirmed when it leaves
 * the queue and Completed or Failed from its conclusion, as the consumer's own reports would
 * (consumer-transitions.ts: whichever comes first makes the one transition).
 *
 * The queue is the delivery table (store/run-following.ts), so a process that dies loses no run:
 * its leases expire and another worker reads the runs. A read is a call to GitHub of the consumer
 * installation's: it takes one of the installation's pacing slots (`ZEKT_INSTALLATION_DISPATCH_RATE`,
 * shared with its dispatches) and one of the dispatcher's slots (the pool, and the per-installation
 * cap of calls in flight), so following runs never crowds out deliveries beyond that budget.
 */
export interface RunFollower {
  /** Reads every due run it can now; returns how many deliveries it handled. */
  followDue(): Promise<number>;
  /** When the next followed run is due (null: none is followed). */
  nextDueAt(): Promise<number | null>;
}

export interface RunFollowerOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  github: Pick<GitHubClient, 'readWorkflowRun'>;
  /** The dispatcher's slots (pool and per-installation cap); null when it has none free. */
  slots: { borrowSlot(consumerAccountId: number): (() => void) | null };
  workerId: string;
  leaseMs?: number;
  requestTimeoutMs?: number;
  scheduleMs?: readonly number[] | undefined;
  /** Calls per minute per consumer installation, shared with dispatches; 0: unpaced. */
  installationRate?: number;
  /** Deliveries claimed per pass. */
  batchSize?: number;
  random?: () => number;
}

/** How long a claimed read waits for a free slot of the dispatcher before it is tried again. */
const NO_SLOT_RETRY_MS = 1_000;

export function createRunFollower(options: RunFollowerOptions): RunFollower {
  const { store, clock, logger } = options;
  const leaseMs = options.leaseMs ?? 60_000;
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  const batch = options.batchSize ?? 32;

  /** Releases the lease without a read: next read at `followAt` (null: no longer followed). */
  const release = (run: FollowedRun, followAt: number | null, slotReserved = false) =>
    store.transaction((trx) =>
      recordRunFollow(trx, {
        deliveryId: run.deliveryId,
        owner: options.workerId,
        followAt,
        read: false,
        slotReserved,
        now: clock.now(),
      }),
    );

  /** Applies what the run says and schedules the next read, in one transaction, if still leased. */
  async function record(
    run: FollowedRun,
    report: ConsumerReport | null,
    followAt: number | null,
  ): Promise<void> {
    const now = clock.now();
    const recorded = await store.transaction(async (trx) => {
      // Only while this worker still holds the run: what it read is then its to record.
      const held = await recordRunFollow(trx, {
        deliveryId: run.deliveryId,
        owner: options.workerId,
        followAt,
        read: true,
        now,
      });
      if (!held || report === null) return held;
      const applied = await applyConsumerReportIn(trx, clock, run.deliveryId, report, null);
      // A transition to a final state stops the following itself; a delivery already final
      // (another report came first) has nothing left to read either.
      if (applied.outcome !== 'changed') await stopFollowing(trx, run.deliveryId);
      return true;
    });
    if (!recorded) {
      logger.warn(
        { deliveryId: run.deliveryId },
        'lease lost before the run read was recorded; another worker owns it',
      );
    }
  }

  async function follow(run: FollowedRun): Promise<void> {
    const now = clock.now();
    // A report (the consumer's call, a webhook) already ended it: nothing left to read.
    if (isFinal(run.status)) {
      await release(run, null);
      return;
    }
    if (followExpired(run.since, now)) {
      await record(run, { kind: 'complete', success: false, failureReason: RUN_FOLLOW_EXPIRED }, null);
      return;
    }
    const [owner, repo] = (run.repository ?? '').split('/');
    if (!owner || !repo || run.installationId === null || run.uninstalledAt !== null) {
      // The App was uninstalled or the repository left the installation: the run cannot be read.
      logger.warn(
        { deliveryId: run.deliveryId },
        'the consumer run can no longer be read: the App is not installed on its repository',
      );
      await release(run, null);
      return;
    }
    const rate = options.installationRate ?? 0;
    if (rate > 0 && !run.slotReserved) {
      const slot = await store.transaction((trx) =>
        reserveDispatchSlot(trx, store.dialect, run.consumerAccountId, now, 60_000 / rate),
      );
      if (slot > now) {
        await release(run, slot, true);
        return;
      }
    }
    const giveBack = options.slots.borrowSlot(run.consumerAccountId);
    if (giveBack === null) {
      await release(run, now + NO_SLOT_RETRY_MS, run.slotReserved);
      return;
    }
    let result: RunReadResult;
    try {
      result = await options.github.readWorkflowRun({
        installationId: run.installationId,
        owner,
        repo,
        runId: run.runId,
        timeoutMs,
      });
    } finally {
      giveBack();
    }
    const schedule = (headers?: Record<string, string>) =>
      nextRunReadAt({
        reads: run.reads + 1,
        now: clock.now(),
        schedule: options.scheduleMs,
        headers,
        random: options.random,
      });
    if (result.outcome === 'failed') {
      logger.warn(
        { deliveryId: run.deliveryId, runId: run.runId, status: result.status, reads: run.reads + 1 },
        `reading the consumer run failed, reading again later: ${result.message}`,
      );
      await record(run, null, schedule(result.headers));
      return;
    }
    const observation: RunObservation =
      result.outcome === 'gone'
        ? { found: false }
        : { found: true, status: result.status, conclusion: result.conclusion };
    const report = reportOfRun(observation);
    // Running, and the delivery already Confirmed: a confirm would only count another confirmation.
    if (report.kind === 'none' || (report.kind === 'confirm' && run.status !== 'Dispatched')) {
      await record(run, null, schedule(result.headers));
      return;
    }
    await record(
      run,
      report.kind === 'confirm'
        ? { kind: 'confirm' }
        : { kind: 'complete', success: report.success, failureReason: report.failureReason },
      report.kind === 'complete' ? null : schedule(result.headers),
    );
  }

  return {
    async followDue() {
      const now = clock.now();
      // A read first: an idle pass (most of them) opens no write transaction, which on SQLite
      // would be a commit and its flush every poll interval.
      const due = await nextRunFollowAt(store.db);
      if (due === null || due > now) return 0;
      const claimed = await store.transaction((trx) =>
        claimRunsToFollow(trx, store.dialect, { owner: options.workerId, now, leaseMs, limit: batch }),
      );
      await Promise.all(
        claimed.map((run) =>
          follow(run).catch((error: unknown) => {
            // The lease expires and another pass reads the run again; nothing is lost.
            logger.error({ err: error, deliveryId: run.deliveryId }, 'following a consumer run failed');
          }),
        ),
      );
      return claimed.length;
    },
    nextDueAt: () => nextRunFollowAt(store.db),
  };
}
