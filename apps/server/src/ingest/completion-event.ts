import { withHandoff } from '../delivery/handoff.js';
import { type CompletedRun, parseWorkflowRun } from '../domain/run-summary.js';
import { NEW_EVENT_COUNTERS, RECEIPT_COUNTERS } from '../domain/usage.js';
import { logRouted, type RouteResult, routeEvent } from '../routing/event-router.js';
import {
  type CompletionDelivery,
  type CompletionEvent,
  type ReceivedCompletion,
  receiveAndCountCompletion,
  receiveCompletion,
} from '../store/received-event.js';
import type { RepositoryHookRow } from '../store/schema.js';
import { countUsages } from '../store/usage.js';
import { recordWorkflowSeen } from '../store/workflows.js';
import { recordRunSpan, startWebhookSpan } from '../tracing/spans.js';
import { noTracer, type Tracer } from '../tracing/tracer.js';
import type { WebhookIngestOptions, WebhookOutcome } from './webhook-types.js';

/**
 * A provider's `workflow_run` webhook. Only `completed` runs are stored; the event, the
 * delivery GUID and the usage counters commit together, so a retried delivery can never count or
 * route twice.
 */
export async function storeCompletionEvent(
  options: WebhookIngestOptions,
  delivery: CompletionDelivery,
  hook: RepositoryHookRow,
  payload: Record<string, unknown>,
): Promise<WebhookOutcome> {
  if (payload.action !== 'completed') {
    return {
      outcome: 'ignored',
      detail: `workflow_run.${String(payload.action)} is not routed; only completed runs are`,
    };
  }
  const parsed = parseWorkflowRun(payload);
  if (!parsed.ok) return { outcome: 'malformed', detail: parsed.problem };
  const run = parsed.value;
  if (run.repositoryId !== hook.repository_id) {
    return {
      outcome: 'forbidden',
      detail: `this hook belongs to repository ${hook.repository_id}, but the payload is about repository ${run.repositoryId}`,
    };
  }
  const now = options.clock.now();
  const tracer = options.tracer ?? noTracer;
  const span = startWebhookSpan(tracer, run, delivery.guid);
  const stored = { routeAfter: now + options.messageGraceMs, traceParent: span.traceparent };
  const outcome =
    options.routeInline && options.messageGraceMs === 0
      ? await storeAndRoute(options, tracer, run, delivery, stored, now)
      : // Routed later, by the router loop: received and counted in one statement on PostgreSQL.
        answerTo(await receiveAndCountCompletion(options.store, run, delivery, stored, now), run, delivery);
  const eventId = 'eventId' in outcome ? outcome.eventId : undefined;
  span.end({ attributes: { 'zekt.outcome': outcome.outcome, 'zekt.event.id': eventId } });
  if (outcome.outcome !== 'accepted') return outcome;
  recordRunSpan(tracer, run, payload);
  const { routed, ...accepted } = outcome as typeof outcome & { routed?: RouteResult };
  if (routed === undefined) {
    options.onEventStored();
  } else {
    logRouted(options.logger, routed);
    // Deliveries the dispatcher took at creation are under way; any other waits for a claim.
    if (routed.outcome === 'routed' && routed.deliveryIds.length > routed.handed)
      options.onDeliveriesCreated();
  }
  return accepted;
}

/**
 * Nothing to wait for: the event is routed in the transaction that stores it, so the event and its
 * deliveries commit together and no second transaction (nor a router pass) is needed. A message of
 * this run committed before us is joined; one committing after us finds the run routed (409).
 */
async function storeAndRoute(
  options: WebhookIngestOptions,
  tracer: Tracer,
  run: CompletedRun,
  delivery: CompletionDelivery,
  stored: CompletionEvent,
  now: number,
): Promise<WebhookOutcome | (WebhookOutcome & { routed: RouteResult })> {
  // Shared: concurrent webhooks share one transaction and its statements on PostgreSQL. Every row
  // two of them may both write goes through a shared statement (the GUID, the run's event, the
  // usage counters) or is one they may both write in any order (the workflow's sighting).
  return withHandoff(
    options.handoff,
    (work) => options.store.sharedTransaction(work),
    async (trx, handoff): Promise<WebhookOutcome | (WebhookOutcome & { routed: RouteResult })> => {
      // First, and on PostgreSQL under the run's lock: a message of this run being stored right
      // now commits before routing reads the run's message (store/received-event.ts).
      const received = await receiveCompletion(trx, options.store.dialect, run, delivery, stored, now);
      if (received.outcome !== 'received') return answerTo(received, run, delivery);
      const accountId = received.repository.account_id;
      const workflow = await recordWorkflowSeen(
        trx,
        { repositoryId: run.repositoryId, path: run.summary.workflowPath, name: run.summary.workflow },
        now,
        { row: received.workflow },
      );
      const { eventId } = received;
      if (eventId === null) {
        await countUsages(trx, options.store.dialect, accountId, RECEIPT_COUNTERS, now);
        return answerTo(received, run, delivery);
      }
      // The account's counters are rows every event of the account updates: counted with
      // routing's last writes, so on PostgreSQL concurrent transactions wait on each other's lock
      // for the least time.
      const routed = await routeEvent(
        trx,
        options.store.dialect,
        {
          event_id: eventId,
          repository_id: run.repositoryId,
          run_id: run.runId,
          run_attempt: run.runAttempt,
          account_id: accountId,
          workflow_path: run.summary.workflowPath,
          summary: JSON.stringify(run.summary),
          received_at: now,
          trace_parent: stored.traceParent,
        },
        now,
        { workflowRead: workflow, routingRead: received.routing, handoff, tracer, usage: NEW_EVENT_COUNTERS },
      );
      return { outcome: 'accepted', eventId, routed };
    },
  );
}

/** The answer to a webhook whose event was stored, or not, as `received` says. */
function answerTo(
  received: ReceivedCompletion,
  run: CompletedRun,
  delivery: { guid: string },
): WebhookOutcome {
  if (received.outcome === 'not-a-provider') {
    return {
      outcome: 'ignored',
      detail: `${run.summary.repository} is not enabled as a provider repository`,
    };
  }
  if (received.outcome === 'duplicate-receipt') {
    return { outcome: 'duplicate', detail: `delivery ${delivery.guid} was already processed` };
  }
  if (received.eventId === null) {
    return {
      outcome: 'duplicate',
      detail: `run ${run.runId} attempt ${run.runAttempt} of ${run.summary.repository} was already received`,
    };
  }
  return { outcome: 'accepted', eventId: received.eventId };
}
