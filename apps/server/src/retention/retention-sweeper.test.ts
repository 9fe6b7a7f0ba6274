import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSummary } from '../../test/support/run-summary.js';
import { openTempStore } from '../../test/support/temp-store.js';
import { createManualClock } from '../domain/clock.js';
import { DAY_MS } from '../domain/duration.js';
import { RETENTION_MS } from '../domain/retention.js';
import { insertArchive } from '../store/archives.js';
import { recordAudit } from '../store/audit.js';
import { finishAttempt, insertDeliveries, newDeliveryRow } from '../store/deliveries/index.js';
import { finishRouting, insertEvent } from '../store/events.js';
import { upsertMessage } from '../store/messages.js';
import { incrementWindow } from '../store/rate-limit-counters.js';
import { recordReplayRequest } from '../store/replays.js';
import { createSession, findSessionUser } from '../store/sessions.js';
import type { Store } from '../store/store.js';
import { getUsage } from '../store/usage.js';
import { upsertUser } from '../store/users.js';
import { recordWebhookDelivery } from '../store/webhook-deliveries.js';
import { createRetentionSweeper } from './retention-sweeper.js';

const T0 = Date.UTC(2026, 0, 1);

const summary = runSummary({ runId: '1', runNumber: 1, completedAt: '2026-01-01T00:00:00Z' });

describe('retention sweeper', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    ({ store, dispose } = await openTempStore());
  });
  afterEach(async () => dispose());

  async function seedRun(runId: number, at: number) {
    const eventId = (await insertEvent(
      store.db,
      {
        repositoryId: 10,
        runId,
        runAttempt: 1,
        accountId: 1,
        summary: { ...summary, runId: String(runId) },
        routeAfter: at,
      },
      at,
    ))!;
    await finishRouting(store.db, eventId, { status: 'routed', messageId: null, deliveriesCreated: 1 }, at);
    await insertArchive(
      store.db,
      {
        eventId,
        summaryJson: JSON.stringify(summary),
        payloadJson: '{"v":1}',
        payloadBytes: 7,
        expiresAt: at + RETENTION_MS.archives,
      },
      at,
    );
    const deliveryId = `delivery-00000000-0000-7000-8000-${String(runId).padStart(12, '0')}`;
    await insertDeliveries(store.db, [
      newDeliveryRow(
        {
          deliveryId,
          eventId,
          subscriptionId: 'sub_1',
          serviceId: 'svc_1',
          providerAccountId: 1,
          providerRepositoryId: 10,
          consumerAccountId: 2,
          consumerRepositoryId: 20,
          correlationId: String(runId),
          runAttempt: 1,
          eventType: 'deployed',
          durable: true,
        },
        at,
      ),
    ]);
    await store.db
      .updateTable('deliveries')
      .set({ lease_owner: 'w' })
      .where('delivery_id', '=', deliveryId)
      .execute();
    await finishAttempt(store, {
      deliveryId,
      owner: 'w',
      attempt: {
        number: 1,
        startedAt: at,
        durationMs: 5,
        outcome: 'accepted',
        statusCode: 204,
        errorCategory: null,
        errorMessage: null,
        responseHeaders: null,
      },
      update: { dispatch_state: 'accepted' },
    });
    return { eventId, deliveryId };
  }

  const count = async (
    table:
      | 'deliveries'
      | 'delivery_attempts'
      | 'archives'
      | 'messages'
      | 'events'
      | 'webhook_deliveries'
      | 'webhook_receipts'
      | 'sessions'
      | 'rate_limit_counters'
      | 'replay_requests'
      | 'audit_entries',
  ) =>
    Number(
      (
        await store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('keeps a record exactly 396 days old and removes it one millisecond later, with its attempts', async () => {
    const clock = createManualClock(T0);
    const sweeper = createRetentionSweeper({ store, clock, logger: pino({ level: 'silent' }), batchSize: 2 });
    await seedRun(1, T0);
    await seedRun(2, T0 + 1);
    clock.set(T0 + RETENTION_MS.deliveries);
    expect((await sweeper.sweep()).deliveries).toBe(0);
    expect(await count('deliveries')).toBe(2);
    clock.set(T0 + RETENTION_MS.deliveries + 1);
    expect((await sweeper.sweep()).deliveries).toBe(1);
    expect(await count('deliveries')).toBe(1);
    expect(await count('delivery_attempts')).toBe(1);
    // The first run's event went with its last delivery; the second one's is still referenced.
    expect(await count('events')).toBe(1);
    clock.advance(1);
    const report = await sweeper.sweep();
    expect(report.deliveries).toBe(1);
    expect(report.events).toBe(1);
    expect(await count('events')).toBe(0);
    expect(await count('deliveries')).toBe(0);
    expect(await count('delivery_attempts')).toBe(0);
  });

  it('removes archives after 90 days, at the boundary', async () => {
    const clock = createManualClock(T0);
    const sweeper = createRetentionSweeper({ store, clock, logger: pino({ level: 'silent' }) });
    await seedRun(1, T0);
    clock.set(T0 + RETENTION_MS.archives);
    expect((await sweeper.sweep()).archives).toBe(0);
    clock.advance(1);
    expect((await sweeper.sweep()).archives).toBe(1);
    expect(await count('archives')).toBe(0);
    expect(await count('deliveries')).toBe(1);
  });

  it('removes messages whose run never completed after 24 h and counts them as orphaned', async () => {
    const clock = createManualClock(T0);
    const sweeper = createRetentionSweeper({ store, clock, logger: pino({ level: 'silent' }), batchSize: 2 });
    const message = (runId: number, accountId: number) => ({
      repositoryId: 10,
      runId,
      runAttempt: 1,
      accountId,
      workflowPath: null,
      eventType: 'x',
      payloadJson: '{}',
      payloadBytes: 2,
      sender: {},
    });
    for (const runId of [1, 2, 3]) await upsertMessage(store.db, message(runId, 1), T0);
    await upsertMessage(store.db, message(4, 2), T0);
    await upsertMessage(store.db, message(5, 1), T0 + 1);
    clock.set(T0 + DAY_MS);
    expect((await sweeper.sweep()).orphanedMessages).toBe(0);
    clock.advance(1);
    expect((await sweeper.sweep()).orphanedMessages).toBe(4);
    expect(await count('messages')).toBe(1);
    expect((await getUsage(store.db, 1, '2026-01')).counters.messagesOrphaned).toBe(3);
    expect((await getUsage(store.db, 2, '2026-01')).counters.messagesOrphaned).toBe(1);
  });

  it('forgets webhook delivery GUIDs after 30 days, per hook and from before they were', async () => {
    const clock = createManualClock(T0);
    const sweeper = createRetentionSweeper({ store, clock, logger: pino({ level: 'silent' }) });
    await recordWebhookDelivery(store.db, { guid: 'g', event: 'ping', hookId: null }, T0);
    // A row written before receipts named their hook (migration 0010), or by a previous version.
    await store.db
      .insertInto('webhook_deliveries')
      .values({ delivery_guid: 'old', event: 'ping', hook_id: 5, received_at: T0 })
      .execute();
    clock.set(T0 + 30 * DAY_MS);
    expect((await sweeper.sweep()).webhookDeliveries).toBe(0);
    clock.advance(1);
    expect((await sweeper.sweep()).webhookDeliveries).toBe(2);
    expect(await count('webhook_receipts')).toBe(0);
    expect(await count('webhook_deliveries')).toBe(0);
  });

  it('removes console sessions once they expire, and not before', async () => {
    const clock = createManualClock(T0);
    const sweeper = createRetentionSweeper({ store, clock, logger: pino({ level: 'silent' }) });
    const user = await upsertUser(store.db, { login: 'alice', githubId: 7 }, T0);
    await createSession(store.db, { sessionHash: 'h1', userId: user.user_id, expiresAt: T0 + DAY_MS }, T0);
    clock.set(T0 + DAY_MS - 1);
    expect((await sweeper.sweep()).sessions).toBe(0);
    expect((await findSessionUser(store.db, 'h1', clock.now()))?.login).toBe('alice');
    clock.advance(1);
    // Expired sessions stop working at once; the sweep only tidies up.
    expect(await findSessionUser(store.db, 'h1', clock.now())).toBeUndefined();
    expect((await sweeper.sweep()).sessions).toBe(1);
    expect(await count('sessions')).toBe(0);
  });

  it('forgets rate-limit windows after an hour and replay idempotency keys after a day', async () => {
    const clock = createManualClock(T0);
    const sweeper = createRetentionSweeper({ store, clock, logger: pino({ level: 'silent' }) });
    await incrementWindow(store.db, 'auth-failure:client:192.0.2.1', T0);
    await incrementWindow(store.db, 'auth-failure:client:192.0.2.1', T0 + 3_600_000);
    await recordReplayRequest(
      store.db,
      { requestedBy: 'usr_1', deliveryId: 'd1', key: 'k', replayId: 'd2' },
      T0,
    );
    clock.set(T0 + 3_600_000);
    expect((await sweeper.sweep()).rateLimitCounters).toBe(0);
    clock.advance(1);
    expect((await sweeper.sweep()).rateLimitCounters).toBe(1);
    expect(await count('rate_limit_counters')).toBe(1);
    clock.set(T0 + DAY_MS);
    expect((await sweeper.sweep()).replayRequests).toBe(0);
    clock.advance(1);
    expect((await sweeper.sweep()).replayRequests).toBe(1);
    expect(await count('replay_requests')).toBe(0);
  });

  it('keeps the audit trail as long as delivery records, then removes it', async () => {
    const clock = createManualClock(T0);
    const sweeper = createRetentionSweeper({ store, clock, logger: pino({ level: 'silent' }) });
    const change = {
      actor: { userId: 'usr_1', login: 'alice', tokenId: null },
      accountIds: [1, 2],
      action: 'subscription.approve' as const,
      target: { type: 'subscription' as const, id: 'sub_1' },
    };
    await recordAudit(store.db, change, T0);
    await recordAudit(store.db, change, T0 + DAY_MS);
    expect(RETENTION_MS.auditEntries).toBe(RETENTION_MS.deliveries);
    clock.set(T0 + RETENTION_MS.deliveries);
    expect((await sweeper.sweep()).auditEntries).toBe(0);
    clock.advance(1);
    // One change, one row per account it concerns.
    expect((await sweeper.sweep()).auditEntries).toBe(2);
    expect(await count('audit_entries')).toBe(2);
  });
});
