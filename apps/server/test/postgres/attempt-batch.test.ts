import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPT_BATCH } from '../../src/store/deliveries/finish-attempt.js';
import {
  type AttemptRecord,
  claimWithContext,
  finishAttempt,
  getDelivery,
  insertDeliveries,
  listAttempts,
  newDeliveryRow,
} from '../../src/store/deliveries/index.js';
import { openStore, type Store } from '../../src/store/store.js';
import { getUsage } from '../../src/store/usage.js';
import { recordingPostgresStore } from '../support/recording-postgres-store.js';

/**
 * On PostgreSQL the attempts finished in one turn of the event loop are recorded by one statement
 * (store/engine/statement-batches.ts): per-statement cost dominated the server's CPU per event. The
 * store contract checks what they write; this checks how many statements they cost, that a failed
 * batch falls back to one statement per attempt, and that closing the store sends a pending batch.
 */
const pg = recordingPostgresStore();
const statements = pg.statements;

const DAY = Date.UTC(2026, 10, 20, 12);

/** `count` deliveries to account 2, claimed by worker `w`. */
async function claimed(s: Store, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `d-${String(i).padStart(3, '0')}`);
  await insertDeliveries(
    s.db,
    ids.map((deliveryId) =>
      newDeliveryRow(
        {
          deliveryId,
          eventId: 'evt_1',
          subscriptionId: 'sub_1',
          serviceId: 'svc_1',
          providerAccountId: 1,
          providerRepositoryId: 10,
          consumerAccountId: 2,
          consumerRepositoryId: 20,
          correlationId: '77',
          runAttempt: 1,
          eventType: 'deployed',
          durable: true,
        },
        0,
      ),
    ),
  );
  const { claimed: rows } = await claimWithContext(s.db, 'postgres', {
    owner: 'w',
    now: 1_000,
    leaseMs: 60_000,
    limit: count,
  });
  expect(rows).toHaveLength(count);
  return ids;
}

const accepted = (number = 1): AttemptRecord => ({
  number,
  startedAt: DAY,
  durationMs: 5,
  outcome: 'accepted',
  statusCode: 204,
  errorCategory: null,
  errorMessage: null,
  responseHeaders: null,
});

const finishAccepted = (s: Store, deliveryId: string, owner = 'w') =>
  finishAttempt(s, {
    deliveryId,
    owner,
    attempt: accepted(),
    update: { dispatch_state: 'accepted', next_attempt_at: null, updated_at: DAY },
    awaitStartSince: DAY,
    dispatchCountedAt: DAY,
  });

const dispatchCalls = async (s: Store) => (await getUsage(s.db, 2, '2026-11', DAY)).counters.dispatchApiCalls;

describe('attempts finished together on PostgreSQL', () => {
  it('records the attempts of one turn in one statement, each with its own answer', async () => {
    const s = pg.store;
    const [a, b, c, d] = await claimed(s, 4);
    statements.length = 0;
    const results = await Promise.all([
      finishAccepted(s, a as string),
      finishAccepted(s, b as string, 'someone else'),
      finishAttempt(s, {
        deliveryId: c as string,
        owner: 'w',
        attempt: null,
        update: { next_attempt_at: 9_000, slot_reserved: true, attempt_count: 0, updated_at: DAY },
      }),
      finishAccepted(s, d as string),
    ]);
    expect(results).toEqual([true, false, true, true]);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^with updated as \(\s*update deliveries d set/);
    expect(statements[0]).toContain('zekt_rows($1::jsonb)');
    expect(await dispatchCalls(s)).toBe(2);
  });

  it('sends the same statement text for a batch of one (no load) as for a batch of several', async () => {
    const s = pg.store;
    const ids = await claimed(s, 7);
    statements.length = 0;
    expect(await finishAccepted(s, ids[0] as string)).toBe(true);
    expect(await Promise.all(ids.slice(1).map((id) => finishAccepted(s, id)))).toEqual(
      ids.slice(1).map(() => true),
    );
    expect(statements).toHaveLength(2);
    expect(statements[1]).toBe(statements[0]);
    expect(await dispatchCalls(s)).toBe(7);
  });

  it(`sends at most ${MAX_ATTEMPT_BATCH} attempts per statement`, async () => {
    const s = pg.store;
    const ids = await claimed(s, MAX_ATTEMPT_BATCH + 4);
    statements.length = 0;
    const results = await Promise.all(ids.map((id) => finishAccepted(s, id)));
    expect(results.every((recorded) => recorded)).toBe(true);
    expect(statements).toHaveLength(2);
    expect(await dispatchCalls(s)).toBe(MAX_ATTEMPT_BATCH + 4);
  });

  it('runs each attempt alone when the batch fails: one bad row fails no other', async () => {
    const s = pg.store;
    const [a, b, c] = await claimed(s, 3);
    // b's attempt 1 is recorded already: its second attempt 1 breaks the attempts' unique key.
    await s.db
      .insertInto('delivery_attempts')
      .values({
        attempt_id: 'att_existing',
        delivery_id: b as string,
        subscription_id: 'sub_1',
        number: 1,
        started_at: 0,
        duration_ms: 1,
        outcome: 'failed',
        status_code: 500,
        error_category: 'server_error',
        error_message: 'boom',
        response_headers: null,
      })
      .execute();
    statements.length = 0;
    const results = await Promise.allSettled([
      finishAccepted(s, a as string),
      finishAccepted(s, b as string),
      finishAccepted(s, c as string),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results.filter((r) => r.status === 'fulfilled').map((r) => r.value)).toEqual([true, true]);
    // The batch, then one statement per attempt.
    expect(statements).toHaveLength(4);
    // Nothing of the failed attempt nor of the failed batch was kept.
    expect((await getDelivery(s.db, b as string))?.lease_owner).toBe('w');
    expect((await listAttempts(s.db, b as string)).map((x) => x.attempt_id)).toEqual(['att_existing']);
    expect((await listAttempts(s.db, a as string)).map((x) => x.number)).toEqual([1]);
    expect(await dispatchCalls(s)).toBe(2);
  });

  it('records an update the batch does not write in a statement of its own', async () => {
    const s = pg.store;
    const [a, b] = await claimed(s, 2);
    statements.length = 0;
    const results = await Promise.all([
      finishAccepted(s, a as string),
      finishAttempt(s, {
        deliveryId: b as string,
        owner: 'w',
        attempt: accepted(),
        update: { dispatch_state: 'accepted', confirmed_at: DAY, updated_at: DAY },
        dispatchCountedAt: DAY,
      }),
    ]);
    expect(results).toEqual([true, true]);
    expect(statements).toHaveLength(2);
    expect((await getDelivery(s.db, b as string))?.confirmed_at).toBe(DAY);
    expect(await dispatchCalls(s)).toBe(2);
  });

  it('sends a pending batch before the store closes', async () => {
    const s = pg.store;
    const ids = await claimed(s, 3);
    const finishing = Promise.all(ids.map((id) => finishAccepted(s, id)));
    await pg.closeNow();
    expect(await finishing).toEqual([true, true, true]);
    const reopened = await openStore({ kind: 'postgres', url: pg.url, poolSize: 1 });
    try {
      for (const id of ids) expect((await getDelivery(reopened.db, id))?.dispatch_state).toBe('accepted');
      expect(await dispatchCalls(reopened)).toBe(3);
    } finally {
      await reopened.close();
    }
  });
});
