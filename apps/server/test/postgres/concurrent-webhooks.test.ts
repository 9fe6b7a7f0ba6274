import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageDay } from '../../src/domain/usage.js';
import { setUpWorld } from '../support/demo-world.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';

/**
 * Completion webhooks that arrive together on PostgreSQL share one transaction and its statements
 * (store/engine/shared-transactions.ts). What two of them may both write is decided as if they had
 * arrived one after the other: a run sent twice at once (two of Zekt's hooks, two GUIDs) is
 * stored and routed once, a GUID redelivered while it is being processed is processed once, and
 * every run of the burst is delivered exactly once and counted once.
 */
let h: Harness;

beforeAll(async () => {
  // Pacing off: the burst's deliveries go out at once, as the dispatcher's pool allows.
  h = await startHarness({ env: { ZEKT_INSTALLATION_DISPATCH_RATE: '0' } });
  await setUpWorld(h);
});

afterAll(async () => {
  await h?.close();
});

describe('completion webhooks at the same moment', () => {
  it('stores, routes, delivers and counts each run once', async () => {
    const template = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    await eventually(() => (h.sim.dispatches({ repository: 'globex/app' }).length === 1 ? true : undefined));
    const completed = template.webhooks.find((w) => w.action === 'completed')?.payload as {
      workflow_run: { id: number; run_attempt: number };
    };
    const provider = await h.zekt.store.db
      .selectFrom('accounts')
      .select('account_id')
      .where('login', '=', 'acme')
      .executeTakeFirstOrThrow();
    const counters = async () => {
      const rows = await h.zekt.store.db
        .selectFrom('usage_daily_shards')
        .select(['counter', (eb) => eb.fn.sum<number>('value').as('n')])
        .where('account_id', '=', provider.account_id)
        .where('day', '=', usageDay(Date.now()))
        .groupBy('counter')
        .execute();
      return Object.fromEntries(rows.map((r) => [r.counter, Number(r.n)]));
    };
    const before = await counters();

    const send = (runId: number) =>
      h.sim.sendRepositoryWebhook('acme/api', 'workflow_run', {
        ...completed,
        workflow_run: { ...completed.workflow_run, id: runId, run_attempt: 1 },
      });
    const base = template.run.id + 10_000;
    const runs = Array.from({ length: 16 }, (_, i) => base + i);
    // Every run once, the first four twice (other GUIDs), and the template's GUID redelivered thrice.
    const sent = await Promise.all([
      ...runs.map(send),
      ...runs.slice(0, 4).map(send),
      ...[1, 2, 3].map(() => h.sim.redeliver(template.webhooks.find((w) => w.action === 'completed')!.guid)),
    ]);
    const answers = sent.flat().map((d) => ({
      status: d.status,
      outcome: JSON.parse(d.responseBody ?? '{}').outcome as string,
      runId: (d.payload as { workflow_run: { id: number } }).workflow_run.id,
    }));
    expect(answers.every((a) => a.status !== null && a.status < 300)).toBe(true);
    for (const runId of runs) {
      const outcomes = answers.filter((a) => a.runId === runId).map((a) => a.outcome);
      expect(outcomes.filter((o) => o === 'accepted')).toHaveLength(1);
      expect(outcomes.length - 1).toBe(outcomes.filter((o) => o === 'duplicate').length);
    }
    expect(answers.filter((a) => a.runId === template.run.id).map((a) => a.outcome)).toEqual([
      'duplicate',
      'duplicate',
      'duplicate',
    ]);

    const events = await h.zekt.store.db
      .selectFrom('events')
      .select(['run_id', 'route_status', 'deliveries_created'])
      .where('run_id', 'in', runs)
      .execute();
    expect(events).toHaveLength(runs.length);
    expect(events.every((e) => e.route_status === 'routed' && e.deliveries_created === 1)).toBe(true);
    const dispatched = await eventually(() => {
      const ids = h.sim
        .dispatches({ repository: 'globex/app' })
        .map((d) => Number((d.clientPayload as { zekt: { correlationId: string } }).zekt.correlationId))
        .filter((id) => runs.includes(id));
      return ids.length >= runs.length ? ids : undefined;
    });
    expect([...dispatched].sort()).toEqual([...runs].sort());
    const after = await counters();
    // Counted: each webhook of a new GUID (the 20 sends), each run once; the redeliveries not at all.
    expect((after.webhookDeliveriesReceived ?? 0) - (before.webhookDeliveriesReceived ?? 0)).toBe(20);
    expect((after.eventsReceived ?? 0) - (before.eventsReceived ?? 0)).toBe(runs.length);
  });
});
