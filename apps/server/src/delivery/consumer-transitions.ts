import type { Kysely } from 'kysely';
import type { Clock } from '../domain/clock.js';
import { complete, confirm, type Transition } from '../domain/delivery-state.js';
import type { UsageCounter } from '../domain/usage.js';
import { changeDeliveryState, getDelivery } from '../store/deliveries/index.js';
import type { Database, DeliveryRow, DeliveryUpdate } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { countUsage } from '../store/usage.js';
import { recordReportSpan } from '../tracing/spans.js';
import { noTracer, type Tracer } from '../tracing/tracer.js';

/**
 * Confirm and complete, wherever they come from: the consumer's API call, the
 * completion-tracking webhook or Zekt's own reads of a run it follows. All go
 * through here, so the same run reported several ways makes one transition.
 */
export type ConsumerReport =
  | { kind: 'confirm' }
  /** `failureReason`: why the run did not succeed (its conclusion, domain/run-following.ts), when known. */
  | { kind: 'complete'; success: boolean; failureReason?: string | undefined };

export type ConsumerReportResult =
  | { outcome: 'changed'; delivery: DeliveryRow }
  | { outcome: 'final'; delivery: DeliveryRow }
  | { outcome: 'missing' };

export async function applyConsumerReport(
  deps: { store: Store; clock: Clock; tracer?: Tracer | undefined },
  deliveryId: string,
  report: ConsumerReport,
  usage: UsageCounter | null,
): Promise<ConsumerReportResult> {
  const startedAt = deps.clock.now();
  const result = await deps.store.transaction((trx) =>
    applyConsumerReportIn(trx, deps.clock, deliveryId, report, usage),
  );
  recordReportSpan(deps.tracer ?? noTracer, report.kind, startedAt, result);
  return result;
}

/** The same, inside the caller's transaction (writes that must commit with the transition). */
export async function applyConsumerReportIn(
  trx: Kysely<Database>,
  clock: Clock,
  deliveryId: string,
  report: ConsumerReport,
  usage: UsageCounter | null,
): Promise<ConsumerReportResult> {
  const first = await getDelivery(trx, deliveryId);
  if (!first) return { outcome: 'missing' };
  if (usage) await countUsage(trx, first.consumer_account_id, usage, clock.now());
  // A concurrent writer can only win a bounded number of times: each win is a state change.
  for (let round = 0; round < 5; round++) {
    const row = round === 0 ? first : await getDelivery(trx, deliveryId);
    if (!row) return { outcome: 'missing' };
    const now = clock.now();
    const state = {
      status: row.status,
      confirmedAt: row.confirmed_at,
      confirmationAttempts: row.confirmation_attempts,
    };
    const transition: Transition =
      report.kind === 'confirm' ? confirm(state, now) : complete(state, report.success, now);
    if (transition.outcome === 'final') return { outcome: 'final', delivery: row };
    const { change } = transition;
    const update: DeliveryUpdate = {
      status: change.status,
      confirmed_at: change.confirmedAt,
      confirmation_attempts: change.confirmationAttempts,
      // Any report means the consumer workflow started: it is no longer waited for.
      awaiting_start_since: null,
      updated_at: now,
      ...(change.completedAt === undefined ? {} : { completed_at: change.completedAt }),
      ...(change.conclusion === undefined ? {} : { consumer_conclusion: change.conclusion }),
      ...(change.isFinalized === undefined ? {} : { is_finalized: change.isFinalized }),
      // Final: a run Zekt follows need not be read again (run-follower.ts).
      ...(change.isFinalized ? { run_follow_at: null } : {}),
      ...(report.kind === 'complete' && !report.success && report.failureReason !== undefined
        ? { failure_reason: report.failureReason }
        : {}),
    };
    if (
      await changeDeliveryState(
        trx,
        deliveryId,
        { status: row.status, confirmationAttempts: row.confirmation_attempts },
        update,
      )
    ) {
      return { outcome: 'changed', delivery: (await getDelivery(trx, deliveryId))! };
    }
  }
  throw new Error(`delivery ${deliveryId} kept changing under a consumer report`);
}
