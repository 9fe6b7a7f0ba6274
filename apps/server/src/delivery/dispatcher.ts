import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import {
  type BuildDispatchInput,
  buildDispatchBody,
  buildWorkflowInputs,
  type DispatchBody,
  type WorkflowDispatchBody,
} from '../domain/client-payload.js';
import type { Clock } from '../domain/clock.js';
import { type DeliveryRoute, WORKFLOW_NOT_FOUND } from '../domain/delivery-mode.js';
import { ATTEMPT_OUTCOME_UNKNOWN, afterDispatchAttempt, outcomeUnknown } from '../domain/delivery-state.js';
import { categorizeFailure, type ErrorCategory } from '../domain/error-category.js';
import { awaitsStart } from '../domain/not-started.js';
import { followsRun, nextRunReadAt } from '../domain/run-following.js';
import type { RunSummary } from '../domain/run-summary.js';
import { isActive } from '../domain/subscription-state.js';
import type { DispatchResult, GitHubClient } from '../github/github-client.js';
import { type Metrics, noMetrics } from '../metrics/metrics.js';
import type { DeliveryTokens } from '../security/delivery-token.js';
import {
  type AttemptRecord,
  claimWithContext,
  finishAttempt,
  nextDeliveryDueAt,
  releaseClaims,
} from '../store/deliveries/index.js';
import { attemptRecorded, type ClaimedDelivery, type DispatchContext } from '../store/dispatch-context.js';
import { reserveDispatchSlot } from '../store/pacing.js';
import type { Database, DeliveryUpdate } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { attemptTraceparent, recordAttemptSpan } from '../tracing/spans.js';
import { noTracer, type Tracer } from '../tracing/tracer.js';
import type { DeliveryHandoff, HandedDelivery } from './handoff.js';

/**
 * The dispatcher (SPEC 4): claim due deliveries with a lease → call `repository_dispatch` (or, for
 * a subscription delivering by `workflow_dispatch`, the workflow's dispatch, SPEC 4.1) → record the
 * attempt and the new state. Non-durable deliveries get exactly one attempt; durable ones are
 * retried on the schedule until GitHub accepts them or the schedule runs out. A `workflow_dispatch`
 * GitHub answers with its run is recorded with that run, and — durable, without completion
 * tracking — handed to the run follower (run-follower.ts) through the store.
 */
export interface DispatcherOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  github: GitHubClient;
  deliveryTokens: DeliveryTokens;
  /** Public base URL of this service, for `payloadRef` links. */
  baseUrl: string;
  /** Identifies this worker's leases. */
  workerId: string;
  leaseMs?: number;
  /** GitHub calls this worker has in flight at most (the pool); default 64. */
  concurrency?: number;
  /** Of those, at most this many for one consumer installation; default 8. */
  installationConcurrency?: number;
  /** Called when a call finished and the pool has room again (wakes the dispatch loop). */
  onCapacity?: () => void;
  requestTimeoutMs?: number;
  retryScheduleMs?: readonly number[];
  /** Dispatches per minute per consumer installation; 0 turns pacing off (SPEC 4). */
  installationDispatchRate?: number;
  /** Delays before each read of a followed consumer run (domain/run-following.ts). */
  runFollowScheduleMs?: readonly number[];
  /** Told after a delivery whose run Zekt follows was recorded (wakes the run follower). */
  onRunFollowed?: () => void;
  random?: () => number;
  /**
   * Told when a durable delivery has used its whole retry schedule and failed, inside the
   * transaction that records it: what it writes there (the alert) commits with the Failed state,
   * so a process that dies after the commit cannot lose it.
   */
  onExhausted?: (row: ClaimedDelivery, lastFailure: string, trx: Kysely<Database>) => Promise<void>;
  /** Told after an exhausted delivery's Failed state committed (wakes the alert sender). */
  afterExhausted?: () => void;
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

type Failure = {
  category: ErrorCategory;
  message: string;
  status?: number;
  headers: Record<string, string>;
  /** The delivery's `failure_reason` when it fails for a reason of Zekt's, not GitHub's. */
  reason?: string;
};

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { store, clock, logger } = options;
  const leaseMs = options.leaseMs ?? 60_000;
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  const metrics = options.metrics ?? noMetrics;
  const tracer = options.tracer ?? noTracer;

  /**
   * One attempt. `callEnded` is called as soon as GitHub has answered (or the call failed): the
   * per-installation cap is of calls to GitHub in flight, and recording the answer (its commit
   * included) no longer holds the installation's slot.
   */
  async function attempt(
    row: ClaimedDelivery,
    context: DispatchContext,
    callEnded: () => void,
  ): Promise<void> {
    const startedAt = clock.now();
    const number = row.attempt_count;
    if (outcomeUnknown({ durable: Boolean(row.durable), attemptsMade: number })) {
      // A previous worker died during the only attempt; GitHub may or may not have the dispatch.
      metrics.leaseLost('reclaimed');
      await finish(row, null, {
        dispatch_state: 'failed',
        status: 'Failed',
        failure_reason: ATTEMPT_OUTCOME_UNKNOWN,
        next_attempt_at: null,
        updated_at: startedAt,
      });
      return;
    }
    // Only retries pay for this look-up; a gap in the numbers is a lease that expired mid-attempt.
    if (number > 1 && !(await attemptRecorded(store.db, row.delivery_id, number - 1))) {
      metrics.leaseLost('reclaimed');
    }
    if (await deferForPacing(row, startedAt)) return;
    const prepared = prepare(row, context);
    if ('failure' in prepared) {
      await settle(row, number, startedAt, 0, prepared.failure, false);
      return;
    }
    const { target, call } = prepared;
    const result = await (call.kind === 'repository_dispatch'
      ? options.github.dispatch({ ...target, body: call.body, timeoutMs })
      : options.github.dispatchWorkflow({
          ...target,
          workflow: call.workflow,
          ref: call.ref,
          inputs: call.inputs,
          timeoutMs,
        })
    ).finally(callEnded);
    if (result.runDetailsRefused) {
      logger.warn(
        { deliveryId: row.delivery_id },
        'GitHub refused return_run_details (GitHub Enterprise Server 3.20 or older): workflow_dispatch deliveries are sent without it from now on, and their runs are matched by run name',
      );
    }
    if (result.ok) {
      const at = clock.now();
      // Replays start long after their webhook: they would measure the operator, not Zekt.
      if (row.replay_of === null && prepared.receivedAt !== null) metrics.endToEnd(at - prepared.receivedAt);
      const run = result.consumerRun;
      const durable = Boolean(row.durable);
      // GitHub named the run it created: the delivery started (nothing to wait for), and without
      // completion tracking Zekt follows the run itself.
      const follows = followsRun({
        durable,
        runKnown: run !== undefined,
        completionTracking: Boolean(context.repository?.completionTracking),
      });
      const recorded = await finish(
        row,
        {
          number,
          startedAt,
          durationMs: result.durationMs,
          outcome: 'accepted',
          statusCode: result.status,
          errorCategory: null,
          errorMessage: null,
          responseHeaders: result.headers,
        },
        {
          dispatch_state: 'accepted',
          next_attempt_at: null,
          slot_reserved: false,
          platform_response: JSON.stringify({
            status: result.status,
            headers: result.headers,
            at: new Date(at).toISOString(),
          }),
          payload_by_reference: prepared.byReference,
          updated_at: at,
          ...(run === undefined
            ? {}
            : {
                consumer_run_id: run.id,
                consumer_run_url: run.url,
                consumer_run_html_url: run.htmlUrl,
                run_seen_at: at,
              }),
          ...(follows
            ? {
                run_follow_at: nextRunReadAt({
                  reads: 0,
                  now: at,
                  schedule: options.runFollowScheduleMs,
                  random: options.random,
                }),
                run_follow_reads: 0,
              }
            : {}),
        },
        true,
        // A 204 proves nothing ran: wait for the consumer workflow's first sign of life.
        awaitsStart({ durable, runKnown: run !== undefined }) ? at : undefined,
      );
      if (recorded && follows) options.onRunFollowed?.();
      return;
    }
    await settle(row, number, startedAt, result.durationMs, toFailure(result, context.route), true);
  }

  /**
   * Reserves the consumer installation's next dispatch slot. When that slot is in the future the
   * delivery is put back, due at its slot, without counting an attempt: other installations' work
   * is claimed meanwhile, so one busy tenant never delays another.
   */
  async function deferForPacing(row: ClaimedDelivery, now: number): Promise<boolean> {
    const rate = options.installationDispatchRate ?? 0;
    if (rate <= 0 || row.slot_reserved) return false;
    const slot = await store.transaction((trx) =>
      reserveDispatchSlot(trx, store.dialect, row.consumer_account_id, now, 60_000 / rate),
    );
    metrics.pacingDelayed(slot - now);
    if (slot <= now) return false;
    await finish(row, null, {
      next_attempt_at: Math.ceil(slot),
      slot_reserved: true,
      attempt_count: row.attempt_count - 1,
      updated_at: now,
    });
    return true;
  }

  /** The call to make, from the delivery and the context read with its claim. */
  function prepare(
    row: ClaimedDelivery,
    context: DispatchContext,
  ):
    | { failure: Failure }
    | {
        target: { installationId: number; owner: string; repo: string };
        call:
          | { kind: 'repository_dispatch'; body: DispatchBody }
          | {
              kind: 'workflow_dispatch';
              workflow: string;
              ref: string | null;
              inputs: WorkflowDispatchBody['inputs'];
            };
        byReference: boolean;
        receivedAt: number | null;
      } {
    const { subscriptionStatus, account, repository, archive, eventReceivedAt } = context;
    // Revoked, withdrawn or denied since the delivery was created: nothing more goes to that repository.
    if (subscriptionStatus === null || !isActive(subscriptionStatus)) {
      return {
        failure: {
          category: 'other',
          headers: {},
          reason: 'subscription_inactive',
          message: `the subscription is ${subscriptionStatus ?? 'gone'}: Zekt no longer sends its repository anything`,
        },
      };
    }
    if (!account || account.installationId === null || account.uninstalledAt !== null) {
      return {
        failure: {
          category: 'not_found',
          headers: {},
          message: `the Zekt GitHub App is no longer installed on ${account?.login ?? `account ${row.consumer_account_id}`}; ask its owner to install it again`,
        },
      };
    }
    if (!repository || repository.removedAt !== null) {
      return {
        failure: {
          category: 'not_found',
          headers: {},
          message: `repository ${repository?.fullName ?? row.consumer_repository_id} is no longer part of the Zekt installation of ${account.login}; add it to the installation again`,
        },
      };
    }
    if (!archive) {
      return {
        failure: {
          category: 'other',
          headers: {},
          message: 'the archived payload of this delivery has expired',
        },
      };
    }
    const [owner, repo] = repository.fullName.split('/') as [string, string];
    const payload: BuildDispatchInput = {
      eventType: row.event_type,
      correlationId: row.correlation_id,
      deliveryId: row.delivery_id,
      durable: Boolean(row.durable),
      isReplay: row.replay_of !== null,
      retry: row.retry_number,
      token: row.durable ? options.deliveryTokens.issue(row.delivery_id) : undefined,
      traceparent: attemptTraceparent(tracer, row),
      schemaVersion: row.schema_version,
      event: JSON.parse(archive.summary) as RunSummary,
      message:
        archive.hasMessage && archive.payload !== null ? { payload: JSON.parse(archive.payload) } : undefined,
      payloadUrl: `${options.baseUrl}/api/deliveries/${row.delivery_id}/payload`,
    };
    const target = { installationId: account.installationId, owner, repo };
    if (context.route.mode === 'workflow_dispatch') {
      const built = buildWorkflowInputs(payload);
      const { workflow, ref } = context.route;
      return {
        target,
        call: { kind: 'workflow_dispatch', workflow, ref, inputs: built.inputs },
        byReference: built.byReference,
        receivedAt: eventReceivedAt,
      };
    }
    const built = buildDispatchBody(payload);
    return {
      target,
      call: { kind: 'repository_dispatch', body: built.body },
      byReference: built.byReference,
      receivedAt: eventReceivedAt,
    };
  }

  /** Records a failed attempt: retry later or fail the delivery, as domain/delivery-state.ts decides. */
  async function settle(
    row: ClaimedDelivery,
    number: number,
    startedAt: number,
    durationMs: number,
    failure: Failure,
    calledGitHub: boolean,
  ): Promise<void> {
    const now = clock.now();
    const step = afterDispatchAttempt(
      { durable: Boolean(row.durable), attemptsMade: number, retryNumber: row.retry_number },
      { outcome: 'failed', ...failure, calledGitHub },
      { now, schedule: options.retryScheduleMs, random: options.random },
    );
    const platformResponse =
      failure.status === undefined
        ? undefined
        : JSON.stringify({
            status: failure.status,
            headers: failure.headers,
            at: new Date(now).toISOString(),
          });
    const update: DeliveryUpdate =
      step.next === 'retry'
        ? {
            next_attempt_at: step.dueAt,
            slot_reserved: false,
            retry_number: step.retryNumber,
            updated_at: now,
          }
        : {
            dispatch_state: 'failed',
            status: 'Failed',
            next_attempt_at: null,
            failure_reason: step.failureReason,
            slot_reserved: false,
            retry_number: step.retryNumber,
            updated_at: now,
          };
    if (platformResponse !== undefined) update.platform_response = platformResponse;
    const exhausted = step.next === 'failed' && step.exhausted;
    const recorded = await finish(
      row,
      {
        number,
        startedAt,
        durationMs,
        outcome: 'failed',
        statusCode: failure.status ?? null,
        errorCategory: failure.category,
        errorMessage: failure.message,
        responseHeaders: Object.keys(failure.headers).length > 0 ? failure.headers : null,
      },
      update,
      calledGitHub,
      undefined,
      exhausted ? (trx) => options.onExhausted?.(row, failure.message, trx) ?? Promise.resolve() : undefined,
    );
    logger.warn(
      {
        deliveryId: row.delivery_id,
        attempt: number,
        category: failure.category,
        status: failure.status,
        retryAt: step.next === 'retry' ? step.dueAt : null,
      },
      `dispatch failed: ${failure.message}`,
    );
    if (exhausted && recorded) options.afterExhausted?.();
  }

  async function finish(
    row: ClaimedDelivery,
    attemptRecord: AttemptRecord | null,
    update: DeliveryUpdate,
    calledGitHub = false,
    awaitStartSince?: number,
    /** More writes that must commit with the attempt (and only if it is recorded). */
    alongside?: (trx: Kysely<Database>) => Promise<void>,
  ): Promise<boolean> {
    if (attemptRecord !== null) {
      metrics.dispatchAttempted(
        attemptRecord.outcome === 'accepted' ? null : (attemptRecord.errorCategory as ErrorCategory),
      );
      recordAttemptSpan(tracer, row, attemptRecord, update);
    }
    const recorded = await finishAttempt(store, {
      deliveryId: row.delivery_id,
      owner: options.workerId,
      attempt: attemptRecord,
      update,
      awaitStartSince,
      dispatchCountedAt: calledGitHub ? clock.now() : undefined,
      alongside,
    });
    // Back in the queue, due later (a retry, a pacing slot): the loop must look for it again.
    if (recorded && update.next_attempt_at != null) hint();
    if (!recorded) {
      metrics.leaseLost('taken_over');
      logger.warn(
        { deliveryId: row.delivery_id },
        'lease lost before the attempt was recorded; another worker owns it',
      );
    } else if (update.dispatch_state === 'accepted') {
      logger.info({ deliveryId: row.delivery_id, attempt: attemptRecord?.number }, 'dispatch accepted');
    }
    return recorded;
  }

  // The pool: attempts run side by side and the pool is refilled as each one ends, so a
  // slow call holds back only its own slot. A per-installation cap keeps one slow or throttled
  // installation from filling the pool; pacing (SPEC 4) still spaces each installation's calls.
  const poolSize = options.concurrency ?? 64;
  const perInstallation = Math.min(options.installationConcurrency ?? 8, poolSize);
  const inFlightByAccount = new Map<number, number>();
  const running = new Set<Promise<void>>();
  /** Slots reserved by a handoff whose creating transaction is not durable yet (handoff.ts). */
  let reservedSlots = 0;
  // Whether a claim could find anything. With deliveries handed over at creation, every
  // call that ended woke a claim that found nothing, about one per delivery under load. A claim
  // that saw every due delivery it may take says so; until a hint (a delivery created or replayed)
  // or a pass of the poll, a freed slot wakes the loop only for an installation whose deliveries
  // were left for want of a slot. Hints are counted, so one that arrives while a claim is under way
  // is never overwritten by that claim's answer.
  let claimable = true;
  let leftAtCap = new Set<number>();
  let hints = 0;
  function hint(): void {
    hints++;
    claimable = true;
  }
  /** When the last claim looked: what was due then and not claimed is over a cap (see nextDueAt). */
  let lastClaimAt: number | null = null;

  function giveBackSlot(account: number): void {
    const left = (inFlightByAccount.get(account) ?? 1) - 1;
    if (left > 0) inFlightByAccount.set(account, left);
    else inFlightByAccount.delete(account);
  }

  /** Attempts a claimed delivery; `reserved`: its installation slot is already counted (a handoff). */
  function start({ row, context }: HandedDelivery, reserved = false): Promise<void> {
    const account = row.consumer_account_id;
    if (!reserved) inFlightByAccount.set(account, (inFlightByAccount.get(account) ?? 0) + 1);
    metrics.dispatchStarted(reserved ? 'handoff' : 'claim');
    // The installation's slot is given back when its call to GitHub ends, the pool's when the
    // attempt is recorded: the cap limits calls in flight to one installation, the pool the
    // attempts this worker holds. Measured on one busy installation, holding the slot
    // through the record's commit made the cap, not GitHub, the limit of its deliveries.
    let holdsSlot = true;
    const releaseSlot = () => {
      if (!holdsSlot) return;
      holdsSlot = false;
      giveBackSlot(account);
      if (claimable || leftAtCap.has(account)) options.onCapacity?.();
    };
    const task = attempt(row, context, releaseSlot)
      .catch((error: unknown) => {
        // The lease expires and another pass retries; nothing is lost.
        logger.error({ err: error, deliveryId: row.delivery_id }, 'dispatch attempt crashed');
      })
      .finally(() => {
        running.delete(task);
        if (holdsSlot) releaseSlot();
        else if (claimable || leftAtCap.size > 0) options.onCapacity?.();
      });
    running.add(task);
    return task;
  }

  async function fill(): Promise<Array<Promise<void>>> {
    // A pass claims as many deliveries as the pool has free slots, and the claim itself takes no
    // more of an installation's than its free slots (so none comes back to be released, and the
    // calls that ended across many installations since the last pass are refilled in one
    // statement). Installations at their cap are left out of the claim's scan altogether; the
    // in-flight counts are read as they are now, and one that changes meanwhile only frees slots.
    const room = poolSize - running.size - reservedSlots;
    if (room <= 0) return [];
    const skipAccounts: number[] = [];
    const inFlight = new Map<number, number>();
    for (const [account, count] of inFlightByAccount) {
      if (count >= perInstallation) skipAccounts.push(account);
      else inFlight.set(account, count);
    }
    const now = clock.now();
    lastClaimAt = now;
    const hintsBefore = hints;
    const claim = async (trx: Kysely<Database>) => {
      const { claimed, ...learned } = await claimWithContext(trx, store.dialect, {
        owner: options.workerId,
        now,
        leaseMs,
        limit: room,
        skipAccounts,
        perInstallation,
        inFlight,
      });
      // The claim keeps to each installation's free slots as they were when it was sized; should a
      // row still be over its cap, give it back now rather than hold its lease while it waits.
      const slots = new Map<number, number>();
      const kept: typeof claimed = [];
      const returned: string[] = [];
      for (const one of claimed) {
        const { row } = one;
        const account = row.consumer_account_id;
        const used = slots.get(account) ?? inFlightByAccount.get(account) ?? 0;
        if (used < perInstallation) {
          slots.set(account, used + 1);
          kept.push(one);
        } else {
          returned.push(row.delivery_id);
        }
      }
      await releaseClaims(trx, options.workerId, returned);
      return { kept, learned };
    };
    // On PostgreSQL the claim is one statement, atomic without a transaction around it (BEGIN and
    // COMMIT were two of its three round trips); a release that follows needs no atomicity with it,
    // as a worker dying in between leaves leases that expire like any other. SQLite's writes go
    // through the group commit's transactions.
    const { kept, learned } =
      store.dialect === 'postgres' ? await claim(store.db) : await store.transaction(claim);
    if (learned.sawAll && hints === hintsBefore) {
      claimable = false;
      leftAtCap = new Set(learned.atCap);
    } else {
      claimable = true;
    }
    return kept.map((delivery) => start(delivery));
  }

  /** Counts a call to the installation outside a claim (a handoff, a run read), when there is room. */
  function takeSlot(consumerAccountId: number): boolean {
    if (running.size + reservedSlots >= poolSize) return false;
    const inFlight = inFlightByAccount.get(consumerAccountId) ?? 0;
    if (inFlight >= perInstallation) return false;
    inFlightByAccount.set(consumerAccountId, inFlight + 1);
    reservedSlots++;
    return true;
  }

  /** Gives back slots `takeSlot` counted, waking the loop if that frees room it could use. */
  function releaseSlots(consumerAccountIds: readonly number[]): void {
    for (const account of consumerAccountIds) {
      reservedSlots--;
      giveBackSlot(account);
    }
    if (claimable || consumerAccountIds.some((account) => leftAtCap.has(account))) options.onCapacity?.();
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
    hint,
    mayClaimMore() {
      return claimable;
    },
    reserve(consumerAccountId) {
      if (!takeSlot(consumerAccountId)) return null;
      return { owner: options.workerId, expiresAt: clock.now() + leaseMs };
    },
    start(handed) {
      for (const delivery of handed) {
        reservedSlots--;
        void start(delivery, true);
      }
    },
    release: releaseSlots,
    async nextDueAt() {
      if (running.size + reservedSlots >= poolSize) return null;
      return nextDeliveryDueAt(store.db, lastClaimAt ?? clock.now());
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    borrowSlot(consumerAccountId) {
      if (!takeSlot(consumerAccountId)) return null;
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        releaseSlots([consumerAccountId]);
      };
    },
  };
}

/**
 * A failed call as the attempt records it. A `workflow_dispatch` names its workflow: a 404 is a
 * workflow file GitHub does not have (`workflow_not_found`), a 403 the permission GitHub asked for.
 */
function toFailure(result: Extract<DispatchResult, { ok: false }>, route: DeliveryRoute): Failure {
  const category = categorizeFailure({
    status: result.status,
    headers: result.headers,
    message: result.message,
    errorCode: result.errorCode,
  });
  const where = result.status === undefined ? (result.errorCode ?? 'no response') : `HTTP ${result.status}`;
  let message = `${where}: ${result.message}`;
  let reason: string | undefined;
  if (route.mode === 'workflow_dispatch' && result.status !== undefined) {
    const file = `.github/workflows/${route.workflow}`;
    const on = route.ref ?? 'the default branch';
    if (result.status === 404) {
      message = `${where}: GitHub has no workflow ${file} on ${on} (or the App cannot see the repository): ${result.message}`;
      reason = WORKFLOW_NOT_FOUND;
    } else if (result.status === 422) {
      message = `${where}: GitHub refused the workflow_dispatch to ${file} on ${on}: ${result.message}`;
    } else if (category === 'auth') {
      const needed = result.headers['x-accepted-github-permissions'];
      message = `${where}: ${result.message}${needed ? ` (GitHub needs ${needed})` : ''}: workflow_dispatch needs the App's Actions: write permission, accepted in the installation's settings`;
    }
  }
  return {
    category,
    message,
    ...(result.status === undefined ? {} : { status: result.status }),
    headers: result.headers,
    ...(reason === undefined ? {} : { reason }),
  };
}
