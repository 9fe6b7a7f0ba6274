import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { newDeliveryId } from '../domain/ids.js';
import { RETENTION_MS } from '../domain/retention.js';
import { decideRouting } from '../domain/routing.js';
import type { RunSummary } from '../domain/run-summary.js';
import { insertArchive } from '../store/archives.js';
import { insertDeliveries, newDeliveryRow } from '../store/deliveries.js';
import { finishRouting, takeDueEvent } from '../store/events.js';
import { getMessageByRunKey, markMessageRouted } from '../store/messages.js';
import type { Database, EventRow, NewDelivery, WorkflowRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { routableSubscriptions } from '../store/subscriptions.js';
import { countUsage } from '../store/usage.js';
import { countBlocked, getWorkflow } from '../store/workflows.js';

/**
 * Routes stored completion events (SPEC 3.3): one transaction per event joins the run's message,
 * applies the policy, and creates the deliveries and the archive. The dispatcher takes it from
 * there. Blocked runs are recorded and still charged to the provider.
 */
export interface EventRouterOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** How long archived payloads are kept for replay (SPEC 5: 90 days). */
  archiveRetentionMs: number;
  /** Called after deliveries were committed, to wake the dispatcher. */
  onDeliveriesCreated: () => void;
}

export type RouteResult =
  | { outcome: 'idle' }
  | { outcome: 'blocked'; eventId: string }
  | { outcome: 'routed'; eventId: string; deliveryIds: string[] };

export interface EventRouter {
  /** Routes one due event, if any. */
  routeNext(): Promise<RouteResult>;
  /** Routes every event due now; returns how many were handled. */
  routeDue(): Promise<number>;
}

/** What routing needs of a stored event (an `events` row, or the one just inserted). */
export type RoutableEvent = Pick<
  EventRow,
  'event_id' | 'repository_id' | 'run_id' | 'run_attempt' | 'account_id' | 'workflow_path' | 'summary'
>;

/**
 * Routes one stored, due event inside the caller's transaction: joins the run's message, applies
 * the policy, creates the deliveries and the archive, marks the event routed or blocked. The
 * router calls it for events it claimed; ingestion calls it in the very transaction that stores an
 * event nothing needs to wait for (SPEC 4: durable deliveries are created in that transaction).
 */
export async function routeEvent(
  trx: Kysely<Database>,
  event: RoutableEvent,
  now: number,
  archiveRetentionMs: number = RETENTION_MS.archives,
  /** The event's workflow row, when the caller read it in this transaction (one read less). */
  workflowRead?: WorkflowRow,
): Promise<Exclude<RouteResult, { outcome: 'idle' }>> {
  const runKey = {
    repositoryId: event.repository_id,
    runId: event.run_id,
    runAttempt: event.run_attempt,
  };
  const accountId = event.account_id;
  const message = await getMessageByRunKey(trx, runKey);
  const pendingMessage = message && message.status === 'pending' ? message : undefined;
  const workflow = workflowRead ?? (await getWorkflow(trx, runKey.repositoryId, event.workflow_path));
  const subscriptions = workflow?.whitelisted
    ? await routableSubscriptions(trx, runKey.repositoryId, event.workflow_path)
    : [];
  const decision = decideRouting({
    whitelisted: Boolean(workflow?.whitelisted),
    subscriptions,
    message: pendingMessage ? { eventType: pendingMessage.event_type } : undefined,
  });
  if (pendingMessage) await markMessageRouted(trx, pendingMessage.message_id, now);

  if (decision.outcome === 'blocked') {
    await countBlocked(trx, runKey.repositoryId, event.workflow_path, now);
    await countUsage(trx, accountId, 'eventsBlocked', now);
    await finishRouting(
      trx,
      event.event_id,
      { status: 'blocked', messageId: pendingMessage?.message_id ?? null, deliveriesCreated: 0 },
      now,
    );
    return { outcome: 'blocked', eventId: event.event_id };
  }

  const deliveries: NewDelivery[] = decision.deliveries.map((planned) =>
    newDeliveryRow(
      {
        deliveryId: newDeliveryId(now),
        eventId: event.event_id,
        subscriptionId: planned.subscriptionId,
        serviceId: planned.serviceId,
        providerAccountId: accountId,
        providerRepositoryId: runKey.repositoryId,
        consumerAccountId: planned.consumerAccountId,
        consumerRepositoryId: planned.consumerRepositoryId,
        correlationId: String(runKey.runId),
        runAttempt: runKey.runAttempt,
        eventType: planned.eventType,
        durable: planned.durable,
      },
      now,
    ),
  );
  if (deliveries.length > 0) {
    await insertArchive(
      trx,
      {
        eventId: event.event_id,
        summary: JSON.parse(event.summary) as RunSummary,
        payloadJson: pendingMessage?.payload ?? null,
        payloadBytes: pendingMessage?.payload_bytes ?? 0,
        expiresAt: now + archiveRetentionMs,
      },
      now,
    );
    await insertDeliveries(trx, deliveries);
  }
  await finishRouting(
    trx,
    event.event_id,
    {
      status: 'routed',
      messageId: pendingMessage?.message_id ?? null,
      deliveriesCreated: deliveries.length,
    },
    now,
  );
  return {
    outcome: 'routed',
    eventId: event.event_id,
    deliveryIds: deliveries.map((d) => d.delivery_id),
  };
}

export function createEventRouter(options: EventRouterOptions): EventRouter {
  const { store, clock, logger } = options;

  async function routeNext(): Promise<RouteResult> {
    const result = await store.transaction(async (trx): Promise<RouteResult> => {
      const now = clock.now();
      const event = await takeDueEvent(trx, store.dialect, now);
      if (!event) return { outcome: 'idle' };
      return routeEvent(trx, event, now, options.archiveRetentionMs);
    });
    logRouted(logger, result);
    if (result.outcome === 'routed' && result.deliveryIds.length > 0) options.onDeliveriesCreated();
    return result;
  }

  return {
    routeNext,
    async routeDue() {
      let handled = 0;
      while ((await routeNext()).outcome !== 'idle') handled++;
      return handled;
    },
  };
}

export function logRouted(logger: Logger, result: RouteResult): void {
  if (result.outcome === 'routed') {
    logger.info({ eventId: result.eventId, deliveries: result.deliveryIds.length }, 'event routed');
  } else if (result.outcome === 'blocked') {
    logger.info({ eventId: result.eventId }, 'event blocked: workflow not whitelisted');
  }
}
