import type { CompletedRun } from '../domain/run-summary.js';
import { attemptSpanId, childTraceparent, type TraceRunKey } from '../domain/trace-context.js';
import type { AttemptRecord } from '../store/deliveries/index.js';
import type { ClaimedDelivery } from '../store/dispatch-context.js';
import type { DeliveryRow, DeliveryUpdate } from '../store/schema.js';
import { noSpan, type Span, type SpanAttributes, type Tracer } from './tracer.js';

/**
 * The spans of a provider run's trace, one function per seam, so each component adds one call
 * (docs/operations.md, *Tracing*, draws the tree):
 *
 *   zekt.run (root: ids from the run key)
 *   ├── zekt.message                       POST /api/events/receive
 *   └── zekt.webhook                       POST /webhooks/github; its context is stored on the event
 *       └── zekt.route                     on whichever process routes the event
 *           └── zekt.delivery              one per delivery; its context is stored on the delivery
 *               ├── zekt.dispatch          one per attempt (id from the delivery and number)
 *               ├── zekt.confirm / zekt.complete
 *               └── zekt.replay / zekt.recovery
 *                   └── zekt.delivery      the replayed delivery, and its own attempts
 *
 * Attributes are ids, names, numbers and outcomes: never a payload, a token or a URL.
 */

/** The webhook span: started before the event is stored, so its context is stored with it. */
export function startWebhookSpan(tracer: Tracer, run: CompletedRun, githubDelivery: string): Span {
  if (!tracer.enabled) return noSpan;
  return tracer.start(
    'zekt.webhook',
    { run: runKeyOf(run) },
    {
      attributes: {
        ...runAttributes(run),
        'zekt.github.delivery': githubDelivery,
      },
    },
  );
}

/**
 * The run's root span, recorded once, when its completion event is first stored: from the run's
 * start (`run_started_at`, else its completion) to its completion, as GitHub reports them.
 */
export function recordRunSpan(tracer: Tracer, run: CompletedRun, payload: Record<string, unknown>): void {
  if (!tracer.enabled) return;
  const workflowRun = payload.workflow_run as Record<string, unknown>;
  const endMs = timeOf(workflowRun.updated_at) ?? Date.now();
  const startMs = Math.min(timeOf(workflowRun.run_started_at) ?? endMs, endMs);
  tracer
    .start('zekt.run', { root: runKeyOf(run) }, { attributes: runAttributes(run), startMs })
    .end({ endMs });
}

/** A message received for a run (any outcome once the caller's run is known). */
export function recordMessageSpan(
  tracer: Tracer,
  input: {
    run: TraceRunKey & { repository: string; workflowPath: string | null };
    eventType: string;
    startMs: number;
    outcome: string;
    messageId?: string | undefined;
    bytes?: number | undefined;
  },
): void {
  if (!tracer.enabled) return;
  const { run } = input;
  tracer
    .start(
      'zekt.message',
      { run },
      {
        startMs: input.startMs,
        attributes: {
          'zekt.repository.id': run.repositoryId,
          'zekt.repository': run.repository,
          'zekt.workflow.path': run.workflowPath,
          'zekt.run.id': String(run.runId),
          'zekt.run.attempt': run.runAttempt,
          'zekt.event_type': input.eventType,
          'zekt.message.id': input.messageId,
          'zekt.message.bytes': input.bytes,
        },
      },
    )
    .end({
      attributes: { 'zekt.outcome': input.outcome },
      ...(input.outcome === 'stored' ? {} : { error: input.outcome }),
    });
}

/** Routing of an event, under its webhook's span (or the run's root when the webhook was not traced). */
export function startRouteSpan(
  tracer: Tracer,
  event: {
    event_id: string;
    repository_id: number;
    run_id: number;
    run_attempt: number;
    account_id: number;
    workflow_path: string;
    trace_parent?: string | null;
  },
): Span {
  if (!tracer.enabled) return noSpan;
  const run = { repositoryId: event.repository_id, runId: event.run_id, runAttempt: event.run_attempt };
  return tracer.start('zekt.route', event.trace_parent ? { traceparent: event.trace_parent } : { run }, {
    attributes: {
      'zekt.event.id': event.event_id,
      'zekt.account.id': event.account_id,
      'zekt.repository.id': event.repository_id,
      'zekt.workflow.path': event.workflow_path,
      'zekt.run.id': String(event.run_id),
      'zekt.run.attempt': event.run_attempt,
    },
  });
}

/**
 * A delivery created under `parent` (the route's span, a replay's, a recovery's); returns its
 * context, to store with the row so its attempts and reports continue the trace.
 */
export function recordDeliverySpan(tracer: Tracer, parent: Span, row: DeliveryIdentity): string | null {
  if (parent.traceparent === null) return null;
  const span = tracer.start(
    'zekt.delivery',
    { traceparent: parent.traceparent },
    { attributes: deliveryAttributes(row) },
  );
  span.end();
  return span.traceparent;
}

/** The delivery a replay (or a recovery) creates, under the replay's span; returns its context. */
export function recordReplayedDeliverySpan(
  tracer: Tracer,
  replay: Span,
  original: DeliveryRow,
  replayId: string,
): string | null {
  return recordDeliverySpan(tracer, replay, {
    ...original,
    delivery_id: replayId,
    replay_of: original.delivery_id,
  });
}

/**
 * The `traceparent` sent to the consumer in `client_payload.zekt.traceparent`: the attempt's own
 * span, whose id is derived so the span can be recorded after GitHub answered.
 */
export function attemptTraceparent(tracer: Tracer, row: ClaimedDelivery): string | undefined {
  if (!tracer.enabled) return undefined;
  return childTraceparent(row.trace_parent, attemptSpanId(row.delivery_id, row.attempt_count)) ?? undefined;
}

/** One attempt of a delivery, recorded with its outcome (the span `attemptTraceparent` announced). */
export function recordAttemptSpan(
  tracer: Tracer,
  row: ClaimedDelivery,
  attempt: AttemptRecord,
  update: DeliveryUpdate,
): void {
  if (!tracer.enabled || !row.trace_parent) return;
  const failed = attempt.outcome !== 'accepted';
  tracer
    .start(
      'zekt.dispatch',
      { traceparent: row.trace_parent },
      {
        spanId: attemptSpanId(row.delivery_id, attempt.number),
        startMs: attempt.startedAt,
        attributes: {
          'zekt.delivery.id': row.delivery_id,
          'zekt.subscription.id': row.subscription_id,
          'zekt.consumer.account.id': row.consumer_account_id,
          'zekt.consumer.repository.id': row.consumer_repository_id,
          'zekt.attempt.number': attempt.number,
          'zekt.retry_number': row.retry_number,
          'zekt.outcome': attempt.outcome,
          'http.response.status_code': attempt.statusCode,
          'zekt.error.category': attempt.errorCategory,
          'zekt.delivery.status': update.status ?? undefined,
          'zekt.failure_reason': update.failure_reason ?? undefined,
        },
      },
    )
    .end({
      endMs: attempt.startedAt + attempt.durationMs,
      ...(failed ? { error: attempt.errorCategory ?? 'failed' } : {}),
    });
}

/** A consumer's confirm or complete (its API call, or completion tracking), under the delivery's span. */
export function recordReportSpan(
  tracer: Tracer,
  kind: 'confirm' | 'complete',
  startMs: number,
  result: { outcome: 'changed' | 'final'; delivery: DeliveryRow } | { outcome: 'missing' },
): void {
  if (!tracer.enabled || result.outcome === 'missing' || !result.delivery.trace_parent) return;
  const { delivery } = result;
  tracer
    .start(
      kind === 'confirm' ? 'zekt.confirm' : 'zekt.complete',
      { traceparent: delivery.trace_parent },
      {
        startMs,
        attributes: {
          'zekt.delivery.id': delivery.delivery_id,
          'zekt.consumer.account.id': delivery.consumer_account_id,
          'zekt.consumer.repository.id': delivery.consumer_repository_id,
          'zekt.outcome': result.outcome,
          'zekt.delivery.status': delivery.status,
        },
      },
    )
    .end();
}

/** A replay (or a recovery's replay) of `original`, under the original delivery's span. */
export function startReplaySpan(
  tracer: Tracer,
  as: 'zekt.replay' | 'zekt.recovery',
  original: DeliveryRow,
  recoveryId?: string,
): Span {
  if (!tracer.enabled) return noSpan;
  return tracer.start(
    as,
    { traceparent: original.trace_parent },
    {
      attributes: {
        'zekt.delivery.id': original.delivery_id,
        'zekt.consumer.repository.id': original.consumer_repository_id,
        'zekt.recovery.id': recoveryId,
      },
    },
  );
}

/** What a delivery span names of its delivery (a new row, or a stored one). */
type DeliveryIdentity = Pick<
  DeliveryRow,
  | 'delivery_id'
  | 'event_id'
  | 'subscription_id'
  | 'consumer_account_id'
  | 'consumer_repository_id'
  | 'event_type'
> & { durable: boolean | number; replay_of?: string | null | undefined };

function deliveryAttributes(row: DeliveryIdentity): SpanAttributes {
  return {
    'zekt.delivery.id': row.delivery_id,
    'zekt.event.id': row.event_id,
    'zekt.subscription.id': row.subscription_id,
    'zekt.consumer.account.id': row.consumer_account_id,
    'zekt.consumer.repository.id': row.consumer_repository_id,
    'zekt.event_type': row.event_type,
    'zekt.delivery.durable': Boolean(row.durable),
    'zekt.replay_of': row.replay_of,
  };
}

function runKeyOf(run: CompletedRun): TraceRunKey {
  return { repositoryId: run.repositoryId, runId: run.runId, runAttempt: run.runAttempt };
}

function runAttributes(run: CompletedRun): SpanAttributes {
  return {
    'zekt.repository.id': run.repositoryId,
    'zekt.repository': run.summary.repository,
    'zekt.workflow.path': run.summary.workflowPath,
    'zekt.run.id': String(run.runId),
    'zekt.run.attempt': run.runAttempt,
    'zekt.run.conclusion': run.summary.conclusion,
  };
}

function timeOf(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}
