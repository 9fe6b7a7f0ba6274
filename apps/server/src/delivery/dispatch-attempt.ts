import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import {
  type BuildDispatchInput,
  buildDispatchBody,
  buildWorkflowInputs,
  type DispatchBody,
  type JsonText,
  type WorkflowDispatchBody,
} from '../domain/client-payload.js';
import type { Clock } from '../domain/clock.js';
import { type DeliveryRoute, WORKFLOW_NOT_FOUND } from '../domain/delivery-mode.js';
import { ATTEMPT_OUTCOME_UNKNOWN, afterDispatchAttempt, outcomeUnknown } from '../domain/delivery-state.js';
import { checkDispatchTarget, type DispatchDestination } from '../domain/dispatch-target.js';
import { categorizeFailure, type ErrorCategory } from '../domain/error-category.js';
import { awaitsStart } from '../domain/not-started.js';
import { followsRun, nextRunReadAt } from '../domain/run-following.js';
import type { RunSummary } from '../domain/run-summary.js';
import type { DispatchResult, GitHubClient } from '../github/github-client.js';
import type { Metrics } from '../metrics/metrics.js';
import type { DeliveryTokens } from '../security/delivery-token.js';
import { type AttemptRecord, finishAttempt } from '../store/deliveries/index.js';
import { attemptRecorded, type ClaimedDelivery, type DispatchContext } from '../store/dispatch-context.js';
import { reserveDispatchSlot } from '../store/pacing.js';
import type { Database, DeliveryUpdate } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { attemptTraceparent, recordAttemptSpan } from '../tracing/spans.js';
import type { Tracer } from '../tracing/tracer.js';

/**
 * One dispatch attempt of a leased delivery: take the installation's pacing slot (a later
 * one puts the delivery back, due then), prepare the call from the delivery and the context read
 * with its lease (domain/dispatch-target.ts refuses a target that may no longer be sent to), call
 * GitHub, record the attempt and the delivery's new state. It holds no state of its own: the pool
 * (dispatch-pool.ts) decides when it runs, the dispatcher (dispatcher.ts) wires both.
 */
export interface AttemptOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  github: GitHubClient;
  deliveryTokens: DeliveryTokens;
  /** Public base URL of this service, for `payloadRef` links. */
  baseUrl: string;
  /** Identifies this worker's leases. */
  workerId: string;
  requestTimeoutMs: number;
  retryScheduleMs?: readonly number[];
  /** Dispatches per minute per consumer installation; 0 turns pacing off. */
  installationDispatchRate?: number;
  /** Delays before each read of a followed consumer run (domain/run-following.ts). */
  runFollowScheduleMs?: readonly number[];
  random?: () => number;
  metrics: Pick<Metrics, 'dispatchAttempted' | 'endToEnd' | 'pacingDelayed' | 'leaseLost'>;
  tracer: Tracer;
  /** A recorded attempt put its delivery back in the queue, due later (a retry, a pacing slot). */
  onRequeued: () => void;
  /** Told after a delivery whose run Zekt follows was recorded (wakes the run follower). */
  onRunFollowed?: () => void;
  /** See DispatcherOptions.onExhausted: its writes commit with the Failed state. */
  onExhausted?: (row: ClaimedDelivery, lastFailure: string, trx: Kysely<Database>) => Promise<void>;
  /** Told after an exhausted delivery's Failed state committed (wakes the alert sender). */
  afterExhausted?: () => void;
}

/**
 * Attempts one claimed delivery. `callEnded` is called as soon as GitHub has answered (or the call
 * failed), before the answer is recorded.
 */
export type Attempt = (
  row: ClaimedDelivery,
  context: DispatchContext,
  callEnded: () => void,
) => Promise<void>;

type Failure = {
  category: ErrorCategory;
  message: string;
  status?: number;
  headers: Record<string, string>;
  /** The delivery's `failure_reason` when it fails for a reason of Zekt's, not GitHub's. */
  reason?: string;
};

export function createAttempt(options: AttemptOptions): Attempt {
  const { store, clock, logger, metrics, tracer } = options;
  const timeoutMs = options.requestTimeoutMs;

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
        target: DispatchDestination;
        call:
          | { kind: 'repository_dispatch'; body: JsonText<DispatchBody> }
          | {
              kind: 'workflow_dispatch';
              workflow: string;
              ref: string | null;
              inputs: WorkflowDispatchBody['inputs'];
            };
        byReference: boolean;
        receivedAt: number | null;
      } {
    const { archive, eventReceivedAt } = context;
    const checked = checkDispatchTarget({
      subscriptionStatus: context.subscriptionStatus,
      account: context.account,
      repository: context.repository,
      archive,
      consumerAccountId: row.consumer_account_id,
      consumerRepositoryId: row.consumer_repository_id,
    });
    if ('refused' in checked) return { failure: { ...checked.refused, headers: {} } };
    const { target, archive: kept } = checked;
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
      event: JSON.parse(kept.summary) as RunSummary,
      message: kept.hasMessage && kept.payload !== null ? { payload: JSON.parse(kept.payload) } : undefined,
      payloadUrl: `${options.baseUrl}/api/deliveries/${row.delivery_id}/payload`,
    };
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
      call: { kind: 'repository_dispatch', body: built.json },
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
    if (recorded && update.next_attempt_at != null) options.onRequeued();
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

  return attempt;
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
