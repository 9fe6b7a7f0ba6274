import type { Clock } from '../domain/clock.js';
import { complete, confirm, type Transition } from '../domain/delivery-state.js';
import type { UsageCounter } from '../domain/usage.js';
import { changeDeliveryState, getDelivery } from '../store/deliveries.js';
import type { DeliveryRow, DeliveryUpdate } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { countUsage } from '../store/usage.js';
import { recordReportSpan } from '../tracing/spans.js';
import { noTracer, type Tracer } from '../tracing/tracer.js';

/**
 * Confirm and complete, wherever they come from: the consumer's API call (SPEC 6.2) or the
 * completion-tracking webhook (SPEC 6.3). Both go through here, so the same run reported both ways
 * makes one transition.
 */
export type ConsumerReport = { kind: 'confirm' } | { kind: 'complete'; success: boolean };

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
  const result = await deps.store.transaction(async (trx): Promise<ConsumerReportResult> => {
    const first = await getDelivery(trx, deliveryId);
    if (!first) return { outcome: 'missing' };
    if (usage) await countUsage(trx, first.consumer_account_id, usage, deps.clock.now());
    // A concurrent writer can only win a bounded number of times: each win is a state change.
    for (let round = 0; round < 5; round++) {
      const row = round === 0 ? first : await getDelivery(trx, deliveryId);
      if (!row) return { outcome: 'missing' };
      const now = deps.clock.now();
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
  });
  recordReportSpan(deps.tracer ?? noTracer, report.kind, startedAt, result);
  return result;
}
