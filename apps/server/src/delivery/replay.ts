import type { AuditActor } from '../domain/audit.js';
import type { Clock } from '../domain/clock.js';
import { HOUR_MS } from '../domain/duration.js';
import { newDeliveryId } from '../domain/ids.js';
import { isActive } from '../domain/subscription-state.js';
import { getArchive } from '../store/archives.js';
import { recordAudit } from '../store/audit.js';
import { getDelivery, insertDeliveries, newDeliveryRow } from '../store/deliveries/index.js';
import { findReplayRequest, recentReplayTimes, recordReplayRequest } from '../store/replays.js';
import type { DeliveryRow, SubscriptionStatus } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { isUniqueViolation } from '../store/store-errors.js';
import { getSubscription } from '../store/subscriptions.js';
import { recordReplayedDeliverySpan, startReplaySpan } from '../tracing/spans.js';
import { noTracer, type Tracer } from '../tracing/tracer.js';

/**
 * Replay (the seed's section 3): a new delivery of the archived payload, non-destructive.
 * The new record has its own id, its own `retryNumber` from 0 (a replay is not a retry) and
 * `replayOf`; the original keeps its state and gains `replayedBy`. The dispatcher sends it with `isReplay: true`.
 *
 * Only while the subscription is approved: a revoked, withdrawn or denied one sends nothing more to
 * its repository. At most `REPLAY_LIMIT` replays of one delivery (its run to its subscription,
 * replays of replays included) within `REPLAY_WINDOW_MS`. An idempotency key makes a repeated
 * request (same caller, delivery and key) return the replay the first one created.
 *
 * A replay claims the original before it creates anything: `replayed_by` moves from the value the
 * replay read to the new replay's id in one conditional update. Two replays that read the same
 * original at once (a single replay and a bulk recovery, or two single replays) are serialised
 * by that row: the second finds `replayed_by` changed and creates nothing. Its caller learns which
 * replay won (`conflict`); a request with the same idempotency key as the winner gets the winner's
 * replay, as if it had arrived after it.
 */
export const REPLAY_LIMIT = 10;
export const REPLAY_WINDOW_MS = HOUR_MS;

export type ReplayResult =
  | { outcome: 'not_found' }
  | { outcome: 'archive_expired' }
  | { outcome: 'subscription_inactive'; status: SubscriptionStatus | null }
  | { outcome: 'limited'; retryAfterMs: number }
  /** Another replay of the same delivery claimed it while this one was being made: nothing was created. */
  | { outcome: 'conflict'; replayId: string | null }
  | { outcome: 'replayed'; original: DeliveryRow; replayId: string };

export interface ReplayRequest {
  deliveryId: string;
  /** Who asks (a user id): idempotency keys are theirs alone. */
  requestedBy: string;
  idempotencyKey?: string | undefined;
  /** Who the audit trail names; null for the replays of a bulk recovery, recorded once as the recovery. */
  actor: AuditActor | null;
}

/** The span a replay adds to its run's trace: `zekt.replay`, or `zekt.recovery` for a bulk recovery's. */
export interface ReplayTracing {
  tracer: Tracer;
  as: 'zekt.replay' | 'zekt.recovery';
  recoveryId?: string;
}

export async function replayDelivery(
  deps: { store: Store; clock: Clock; tracer?: Tracer | undefined },
  request: ReplayRequest,
  mayAccess: (delivery: DeliveryRow) => boolean,
): Promise<ReplayResult> {
  const tracing: ReplayTracing = { tracer: deps.tracer ?? noTracer, as: 'zekt.replay' };
  try {
    return await deps.store.transaction((trx) =>
      replayOnce(trx, deps.clock.now(), request, mayAccess, tracing),
    );
  } catch (error) {
    // The same key arrived twice at once; the other request's replay is now committed: return it.
    if (request.idempotencyKey === undefined || !isUniqueViolation(error)) throw error;
    return deps.store.transaction((trx) => replayOnce(trx, deps.clock.now(), request, mayAccess, tracing));
  }
}

/** One replay inside the caller's transaction (a bulk recovery records its progress in the same one). */
export async function replayOnce(
  trx: Store['db'],
  now: number,
  request: ReplayRequest,
  mayAccess: (delivery: DeliveryRow) => boolean,
  tracing: ReplayTracing = { tracer: noTracer, as: 'zekt.replay' },
): Promise<ReplayResult> {
  const original = await getDelivery(trx, request.deliveryId);
  if (!original || !mayAccess(original)) return { outcome: 'not_found' };
  const key = request.idempotencyKey;
  if (key !== undefined) {
    const earlier = await findReplayRequest(trx, request.requestedBy, original.delivery_id, key);
    if (earlier) return { outcome: 'replayed', original, replayId: earlier.replay_id };
  }
  const subscription = await getSubscription(trx, original.subscription_id);
  if (!subscription || !isActive(subscription.status)) {
    return { outcome: 'subscription_inactive', status: subscription?.status ?? null };
  }
  const archive = await getArchive(trx, original.event_id);
  if (!archive || archive.expires_at < now) return { outcome: 'archive_expired' };
  const recent = await recentReplayTimes(trx, original, now - REPLAY_WINDOW_MS);
  if (recent.length >= REPLAY_LIMIT) {
    // Free again when the oldest replay of the window leaves it.
    const oldest = recent[recent.length - REPLAY_LIMIT]!;
    return { outcome: 'limited', retryAfterMs: oldest + REPLAY_WINDOW_MS - now };
  }
  const replayId = newDeliveryId(now);
  const claimed = await trx
    .updateTable('deliveries')
    .set({ replayed_by: replayId, updated_at: now })
    .where('delivery_id', '=', original.delivery_id)
    .where((eb) =>
      original.replayed_by === null
        ? eb('replayed_by', 'is', null)
        : eb('replayed_by', '=', original.replayed_by),
    )
    .returning('delivery_id')
    .executeTakeFirst();
  if (claimed === undefined) {
    // On PostgreSQL the update waited for the winner's commit, so this statement's reads see it.
    const earlier =
      key === undefined
        ? undefined
        : await findReplayRequest(trx, request.requestedBy, original.delivery_id, key);
    if (earlier) return { outcome: 'replayed', original, replayId: earlier.replay_id };
    const current = await getDelivery(trx, original.delivery_id);
    return { outcome: 'conflict', replayId: current?.replayed_by ?? null };
  }
  if (key !== undefined) {
    await recordReplayRequest(
      trx,
      { requestedBy: request.requestedBy, deliveryId: original.delivery_id, key, replayId },
      now,
    );
  }
  const span = startReplaySpan(tracing.tracer, tracing.as, original, tracing.recoveryId);
  await insertDeliveries(trx, [
    newDeliveryRow(
      {
        deliveryId: replayId,
        eventId: original.event_id,
        subscriptionId: original.subscription_id,
        serviceId: original.service_id,
        providerAccountId: original.provider_account_id,
        providerRepositoryId: original.provider_repository_id,
        consumerAccountId: original.consumer_account_id,
        consumerRepositoryId: original.consumer_repository_id,
        correlationId: original.correlation_id,
        runAttempt: original.run_attempt,
        eventType: original.event_type,
        durable: Boolean(original.durable),
        replayOf: original.delivery_id,
        traceParent: recordReplayedDeliverySpan(tracing.tracer, span, original, replayId),
        schemaVersion: original.schema_version,
      },
      now,
    ),
  ]);
  span.end();
  if (request.actor) {
    await recordAudit(
      trx,
      {
        actor: request.actor,
        accountIds: [original.provider_account_id, original.consumer_account_id],
        action: 'delivery.replay',
        target: { type: 'delivery', id: original.delivery_id },
        after: { replayId },
      },
      now,
    );
  }
  return { outcome: 'replayed', original, replayId };
}
