import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import {
  type DeliveryHandoff,
  type HandedDelivery,
  type HandoffInTransaction,
  withHandoff,
} from '../delivery/handoff.js';
import type { Clock } from '../domain/clock.js';
import { newDeliveryId } from '../domain/ids.js';
import { MISSING_MESSAGE_PROBLEM } from '../domain/message-schema.js';
import { RETENTION_MS } from '../domain/retention.js';
import { decideRouting } from '../domain/routing.js';
import { type UsageCounter, usageDay } from '../domain/usage.js';
import { newDeliveryRow } from '../store/deliveries/index.js';
import type { SqlDialect } from '../store/engine/dialect.js';
import { finishRouting, takeDueEvent } from '../store/events.js';
import { markMessageRouted } from '../store/messages.js';
import { writeRoutedEvent } from '../store/routed-event.js';
import { type RoutingRead, readRouting } from '../store/routing-read.js';
import type { Database, EventRow, NewDelivery, WorkflowRow } from '../store/schema.js';
import { recordMissingMessage } from '../store/schema-violations.js';
import type { Store } from '../store/store.js';
import { countUsage, countUsages } from '../store/usage.js';
import { countBlocked, getWorkflow } from '../store/workflows.js';
import { recordDeliverySpan, startRouteSpan } from '../tracing/spans.js';
import { noTracer, type Tracer } from '../tracing/tracer.js';

/**
 * Routes stored completion events: one transaction per event joins the run's message,
 * applies the policy, and creates the deliveries and the archive. The dispatcher takes it from
 * there. Blocked runs are recorded and still charged to the provider.
 */
export interface EventRouterOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** How long archived payloads are kept for replay (90 days). */
  archiveRetentionMs: number;
  /** Called after deliveries were committed, to wake the dispatcher. */
  onDeliveriesCreated: () => void;
  /** This process's dispatcher, which takes the deliveries it has room for at creation. */
  handoff?: DeliveryHandoff;
  /** Spans of the run's trace (default: none). */
  tracer?: Tracer;
}

export type RouteResult =
  | { outcome: 'idle' }
  | { outcome: 'blocked'; eventId: string; reason: 'workflow_not_whitelisted' | 'message_missing' }
  /** `handed`: how many of the deliveries the dispatcher took at creation (delivery/handoff.ts). */
  | { outcome: 'routed'; eventId: string; deliveryIds: string[]; handed: number };

export interface EventRouter {
  /** Routes one due event, if any. */
  routeNext(): Promise<RouteResult>;
  /** Routes every event due now; returns how many were handled. */
  routeDue(): Promise<number>;
}

/** What routing needs of a stored event (an `events` row, or the one just inserted). */
export type RoutableEvent = Pick<
  EventRow,
  | 'event_id'
  | 'repository_id'
  | 'run_id'
  | 'run_attempt'
  | 'account_id'
  | 'workflow_path'
  | 'summary'
  | 'received_at'
  | 'trace_parent'
>;

export interface RouteOptions {
  /** How long the archived payload is kept (90 days). */
  archiveRetentionMs?: number;
  /** The event's workflow row, when the caller read it in this transaction (one read less). */
  workflowRead?: WorkflowRow | undefined;
  /**
   * The run's message and the workflow's routable subscriptions, when the caller read them in this
   * transaction after the run's lock (store/received-event-on-postgres.ts): one statement less.
   */
  routingRead?: RoutingRead | undefined;
  /** Leases the deliveries the dispatcher has room for to it (delivery/handoff.ts). */
  handoff?: HandoffInTransaction | undefined;
  /** Spans of the run's trace (default: none). */
  tracer?: Tracer | undefined;
  /**
   * Counters of the event's account the caller adds one to, written with routing's last writes
   * (on PostgreSQL by the same statement).
   */
  usage?: readonly UsageCounter[] | undefined;
}

/**
 * Routes one stored, due event inside the caller's transaction: joins the run's message, applies
 * the policy, creates the deliveries and the archive, marks the event routed or blocked. The
 * router calls it for events it claimed; ingestion calls it in the very transaction that stores an
 * event nothing needs to wait for (durable deliveries are created in that transaction).
 */
export async function routeEvent(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  event: RoutableEvent,
  now: number,
  options: RouteOptions = {},
): Promise<Exclude<RouteResult, { outcome: 'idle' }>> {
  const {
    archiveRetentionMs = RETENTION_MS.archives,
    workflowRead,
    routingRead,
    handoff,
    tracer = noTracer,
    usage,
  } = options;
  const span = startRouteSpan(tracer, event);
  const runKey = {
    repositoryId: event.repository_id,
    runId: event.run_id,
    runAttempt: event.run_attempt,
  };
  const accountId = event.account_id;
  const workflow = workflowRead ?? (await getWorkflow(trx, runKey.repositoryId, event.workflow_path));
  const { message, subscriptions } =
    routingRead ??
    (await readRouting(
      trx,
      dialect,
      { ...runKey, workflowPath: event.workflow_path },
      Boolean(workflow?.whitelisted),
    ));
  const pendingMessage = message && message.status === 'pending' ? message : undefined;
  const decision = decideRouting({
    whitelisted: Boolean(workflow?.whitelisted),
    subscriptions,
    message: pendingMessage
      ? {
          eventType: pendingMessage.event_type,
          schemaVersions:
            pendingMessage.schema_versions === null
              ? null
              : (JSON.parse(pendingMessage.schema_versions) as Record<string, number>),
        }
      : undefined,
  });
  if (pendingMessage) await markMessageRouted(trx, pendingMessage.message_id, now);
  const missingMessage = 'missingMessage' in decision ? decision.missingMessage : [];
  if (missingMessage.length > 0) {
    await recordMissingMessage(
      trx,
      { ...runKey, accountId },
      missingMessage,
      decision.outcome === 'blocked' ? 'blocked' : 'accepted',
      MISSING_MESSAGE_PROBLEM,
      now,
    );
  }

  if (decision.outcome === 'blocked') {
    // The workflow's blocked count is of runs blocked for not being whitelisted.
    if (decision.reason === 'workflow_not_whitelisted')
      await countBlocked(trx, runKey.repositoryId, event.workflow_path, now);
    await countUsage(trx, accountId, 'eventsBlocked', now);
    await finishRouting(
      trx,
      event.event_id,
      { status: 'blocked', messageId: pendingMessage?.message_id ?? null, deliveriesCreated: 0 },
      now,
    );
    if (usage) await countUsages(trx, dialect, accountId, usage, now);
    span.end({ attributes: { 'zekt.outcome': 'blocked', 'zekt.deliveries': 0 } });
    return { outcome: 'blocked', eventId: event.event_id, reason: decision.reason };
  }

  const archive = {
    summary: event.summary,
    hasMessage: pendingMessage !== undefined,
    payload: pendingMessage?.payload ?? null,
  };
  const targets = new Map(subscriptions.map((s) => [s.subscriptionId, s.target]));
  const handed: HandedDelivery[] = [];
  const deliveries: NewDelivery[] = decision.deliveries.map((planned) => {
    const row = newDeliveryRow(
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
        schemaVersion: planned.schemaVersion,
      },
      now,
    );
    row.trace_parent = recordDeliverySpan(tracer, span, row);
    const target = targets.get(planned.subscriptionId);
    const lease = target ? handoff?.reserve(planned.consumerAccountId) : null;
    if (!target || !lease) return row;
    // Leased at creation: the row is what the claim would have written.
    handed.push({
      row: {
        delivery_id: row.delivery_id,
        subscription_id: planned.subscriptionId,
        consumer_account_id: planned.consumerAccountId,
        consumer_repository_id: planned.consumerRepositoryId,
        correlation_id: row.correlation_id,
        event_type: planned.eventType,
        durable: planned.durable,
        attempt_count: 1,
        retry_number: 0,
        replay_of: null,
        slot_reserved: false,
        trace_parent: row.trace_parent ?? null,
        schema_version: planned.schemaVersion,
      },
      context: {
        subscriptionStatus: 'approved',
        account: target.account,
        repository: target.repository,
        route: target.route,
        archive,
        eventReceivedAt: event.received_at,
      },
    });
    return { ...row, lease_owner: lease.owner, lease_expires_at: lease.expiresAt, attempt_count: 1 };
  });
  await writeRoutedEvent(
    trx,
    dialect,
    {
      eventId: event.event_id,
      summaryJson: archive.summary,
      payloadJson: archive.payload,
      payloadBytes: pendingMessage?.payload_bytes ?? 0,
      archiveExpiresAt: now + archiveRetentionMs,
      messageId: pendingMessage?.message_id ?? null,
    },
    deliveries,
    now,
    usage ? { accountId, day: usageDay(now), counters: usage } : undefined,
  );
  for (const delivery of handed) handoff?.hand(delivery);
  span.end({
    attributes: {
      'zekt.outcome': 'routed',
      'zekt.deliveries': deliveries.length,
      'zekt.message.id': pendingMessage?.message_id,
    },
  });
  return {
    outcome: 'routed',
    eventId: event.event_id,
    deliveryIds: deliveries.map((d) => d.delivery_id),
    handed: handed.length,
  };
}

export function createEventRouter(options: EventRouterOptions): EventRouter {
  const { store, clock, logger } = options;

  async function routeNext(): Promise<RouteResult> {
    const result = await withHandoff(
      options.handoff,
      (work) => store.transaction(work),
      async (trx, handoff): Promise<RouteResult> => {
        const now = clock.now();
        const event = await takeDueEvent(trx, store.dialect, now);
        if (!event) return { outcome: 'idle' };
        return routeEvent(trx, store.dialect, event, now, {
          archiveRetentionMs: options.archiveRetentionMs,
          handoff,
          tracer: options.tracer,
        });
      },
    );
    logRouted(logger, result);
    if (result.outcome === 'routed' && result.deliveryIds.length > result.handed)
      options.onDeliveriesCreated();
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
    logger.info(
      { eventId: result.eventId },
      result.reason === 'message_missing'
        ? 'event blocked: no message, and an enforced schema requires one'
        : 'event blocked: workflow not whitelisted',
    );
  }
}
