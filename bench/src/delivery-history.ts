import { DAY_MS } from '@zekt/server/dist/domain/duration.js';
import { newDeliveryId, newId } from '@zekt/server/dist/domain/ids.js';
import { newDeliveryRow } from '@zekt/server/dist/store/deliveries/index.js';
import type { Database, NewDelivery } from '@zekt/server/dist/store/schema.js';
import type { Store } from '@zekt/server/dist/store/store.js';
import type { Insertable } from 'kysely';

/**
 * A year of delivery history for `zekt bench --compare`'s query scenario: `records` delivery
 * records (each with its attempt) spread evenly over the retention period of 396 days, across the
 * given subscriptions, about 2 % of them failed. Written in batches straight into the store.
 */
export async function seedDeliveryHistory(
  store: Store,
  input: {
    records: number;
    now: number;
    providerAccountId: number;
    providerRepositoryId: number;
    serviceId: string;
    subscriptions: Array<{ subscriptionId: string; consumerAccountId: number; consumerRepositoryId: number }>;
    progress?: (done: number) => void;
  },
): Promise<void> {
  const spanMs = 396 * DAY_MS;
  const batch = 400;
  const perEvent = input.subscriptions.length;
  for (let done = 0; done < input.records; ) {
    const deliveries: NewDelivery[] = [];
    const attempts: Insertable<Database['delivery_attempts']>[] = [];
    const events: Insertable<Database['events']>[] = [];
    for (let i = 0; i < batch && done < input.records; i += perEvent) {
      const at = input.now - spanMs + Math.floor(((done + i) / input.records) * spanMs);
      const runId = 9_000_000_000 + done + i;
      const eventId = newId('evt', at);
      events.push({
        event_id: eventId,
        repository_id: input.providerRepositoryId,
        run_id: runId,
        run_attempt: 1,
        account_id: input.providerAccountId,
        workflow_path: '.github/workflows/deploy.yml',
        workflow_name: 'Deploy',
        conclusion: 'success',
        summary: '{}',
        received_at: at,
        route_after: at,
        route_status: 'routed' as const,
        routed_at: at,
        message_id: null,
        deliveries_created: perEvent,
      });
      for (const sub of input.subscriptions) {
        const failed: boolean = (done + i + deliveries.length) % 50 === 0;
        const deliveryId = newDeliveryId(at);
        deliveries.push({
          ...newDeliveryRow(
            {
              deliveryId,
              eventId,
              subscriptionId: sub.subscriptionId,
              serviceId: input.serviceId,
              providerAccountId: input.providerAccountId,
              providerRepositoryId: input.providerRepositoryId,
              consumerAccountId: sub.consumerAccountId,
              consumerRepositoryId: sub.consumerRepositoryId,
              correlationId: String(runId),
              runAttempt: 1,
              eventType: 'acme-deployed',
              durable: true,
            },
            at,
          ),
          status: failed ? ('Failed' as const) : ('Completed' as const),
          dispatch_state: failed ? ('failed' as const) : ('accepted' as const),
          attempt_count: 1,
          next_attempt_at: null,
          confirmed_at: failed ? null : at + 2_000,
          completed_at: failed ? null : at + 30_000,
          is_finalized: true,
          failure_reason: failed ? 'consumer_not_found' : null,
        });
        attempts.push({
          attempt_id: newId('att', at),
          delivery_id: deliveryId,
          subscription_id: sub.subscriptionId,
          number: 1,
          started_at: at,
          duration_ms: 120,
          outcome: failed ? ('failed' as const) : ('accepted' as const),
          status_code: failed ? 404 : 204,
          error_category: failed ? 'not_found' : null,
          error_message: failed ? 'HTTP 404: Not Found' : null,
          response_headers: null,
        });
      }
    }
    await store.transaction(async (trx) => {
      await trx.insertInto('events').values(events).execute();
      await trx.insertInto('deliveries').values(deliveries).execute();
      await trx.insertInto('delivery_attempts').values(attempts).execute();
    });
    done += deliveries.length;
    input.progress?.(done);
  }
}
