import type { AlertKind } from '../domain/alerts.js';
import type { Health, HealthReport } from '../domain/health.js';
import type { ClaimedDelivery } from '../store/dispatch-context.js';
import type { FlaggedDelivery } from '../store/not-started.js';

/**
 * What each operational alert says: its account, kind, subject (with the kind, its deduplication
 * key) and data, the JSON the receiver gets. The parts that notice a change raise what these build
 * (alert-service.ts records and sends them).
 */
export interface RaiseInput {
  /** The account whose members see the alert. */
  accountId: number;
  kind: AlertKind;
  /** What the alert is about (a connection or delivery id): with `kind`, the deduplication key. */
  subject: string;
  data: Record<string, unknown>;
}

/** A durable delivery used its whole retry schedule and failed. */
export function exhaustedAlert(
  row: Pick<
    ClaimedDelivery,
    'delivery_id' | 'consumer_account_id' | 'subscription_id' | 'event_type' | 'attempt_count'
  >,
  lastFailure: string,
): RaiseInput {
  return {
    accountId: row.consumer_account_id,
    kind: 'delivery.exhausted',
    subject: row.delivery_id,
    data: {
      deliveryId: row.delivery_id,
      connectionId: row.subscription_id,
      eventType: row.event_type,
      attempts: row.attempt_count,
      lastFailure,
    },
  };
}

/**
 * Accepted deliveries whose consumer workflow never started: one alert per connection, not per
 * delivery, as a missing workflow fails every delivery alike.
 */
export function notStartedAlerts(flagged: readonly FlaggedDelivery[]): RaiseInput[] {
  const byConnection = new Map<string, FlaggedDelivery[]>();
  for (const delivery of flagged) {
    byConnection.set(delivery.subscriptionId, [
      ...(byConnection.get(delivery.subscriptionId) ?? []),
      delivery,
    ]);
  }
  const alerts: RaiseInput[] = [];
  for (const [connectionId, deliveries] of byConnection) {
    const [first] = deliveries;
    if (first === undefined) continue;
    alerts.push({
      accountId: first.consumerAccountId,
      kind: 'delivery.not_started',
      subject: connectionId,
      data: {
        connectionId,
        eventType: first.eventType,
        deliveryIds: deliveries.map((d) => d.deliveryId).slice(0, 20),
        count: deliveries.length,
        recommendation: `the consumer workflow must be on the default branch with on: repository_dispatch: types: [${first.eventType}]`,
      },
    });
  }
  return alerts;
}

/** A connection's health changed (`kind` as domain/alerts.ts names the change). */
export function healthAlert(
  connection: {
    subscription_id: string;
    consumer_account_id: number;
    slug: string;
    provider_repository: string;
    consumer_repository: string;
  },
  kind: AlertKind,
  report: HealthReport,
  before: Health | null,
): RaiseInput {
  return {
    accountId: connection.consumer_account_id,
    kind,
    subject: connection.subscription_id,
    data: {
      connectionId: connection.subscription_id,
      service: connection.slug,
      provider: connection.provider_repository,
      consumer: connection.consumer_repository,
      health: report.health,
      previousHealth: before ?? 'Healthy',
      successRate: report.successRate,
      recentActivity: report.recentActivity,
    },
  };
}
