import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageDay } from '../../src/domain/usage.js';
import { USAGE_SHARDS } from '../../src/store/usage.js';
import { setUpWorld } from '../support/demo-world.js';
import { eventually, type Harness, type HarnessOptions, startHarness } from '../support/harness.js';

/**
 * Message intake against the other transactions of its run, on PostgreSQL, with the overlap made
 * certain by locks a third connection holds instead of left to timing.
 *
 * A message and its run's completion webhook arriving at the same moment. The webhook
 * routes in the transaction that stores its event, so without the run's lock each transaction
 * looks for the other's row before that row is committed, misses it, and the message is answered
 * 201 but never delivered (store/accounts.ts, getRepositoryLockingRun).
 *
 * The overlap is made certain, not left to timing: a third connection holds the row locks of the
 * provider's `messagesReceived` usage counters, so the message's transaction stops after it has
 * stored the message and looked for the run's event, before it commits. The webhook is sent then.
 */
let h: Harness;
let blocker: pg.Client;

/** The service with the demo world, and a connection of the test's own to its database. */
async function startWithBlocker(
  options: HarnessOptions = {},
): Promise<{ harness: Harness; blocker: pg.Client }> {
  const harness = await startHarness(options);
  await setUpWorld(harness);
  if (harness.config.database.kind !== 'postgres') throw new Error('this suite runs on PostgreSQL');
  const client = new pg.Client({ connectionString: harness.config.database.url });
  await client.connect();
  return { harness, blocker: client };
}

beforeAll(async () => {
  ({ harness: h, blocker } = await startWithBlocker());
});

afterAll(async () => {
  await blocker?.end();
  await h?.close();
});

/** Transactions of the service waiting for a lock (a row's, a table's, or the run's advisory lock). */
async function waitingForLocks(): Promise<number> {
  return waitingForLocksOf(blocker);
}

async function waitingForLocksOf(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
  );
  return rows[0]?.n ?? 0;
}

describe('a message and its completion webhook at the same moment', () => {
  it('joins the message to the run instead of answering 201 and dropping it', async () => {
    // A run first, for a real completion payload of acme/api's deploy.yml to send again.
    const template = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const completed = template.webhooks.find((w) => w.action === 'completed')?.payload as {
      workflow_run: { id: number; run_attempt: number };
    };
    const runId = template.run.id + 1_000;
    const provider = await h.zekt.store.db
      .selectFrom('accounts')
      .select('account_id')
      .where('login', '=', 'acme')
      .executeTakeFirstOrThrow();

    // Hold every shard of today's messagesReceived counter.
    const day = usageDay(Date.now());
    for (let shard = 0; shard < USAGE_SHARDS; shard++) {
      await blocker.query(
        `insert into usage_daily_shards (account_id, day, counter, shard, value) values ($1, $2, 'messagesReceived', $3, 0)
         on conflict do nothing`,
        [provider.account_id, day, shard],
      );
    }
    await blocker.query('begin');
    await blocker.query(
      `select 1 from usage_daily_shards where account_id = $1 and day = $2 and counter = 'messagesReceived' for update`,
      [provider.account_id, day],
    );

    const token = await h.sim.mintOidcToken({ repository: 'acme/api', workflow: 'deploy.yml', runId });
    const message = h.call('POST', '/api/events/receive', {
      headers: { authorization: `Bearer ${token}` },
      body: { eventType: 'acme-deployed', payload: '{"version":"9.9.9"}' },
    });
    await eventually(async () => ((await waitingForLocks()) >= 1 ? true : undefined));

    let webhookAnswered = false;
    const webhook = h.sim
      .sendRepositoryWebhook('acme/api', 'workflow_run', {
        ...completed,
        workflow_run: { ...completed.workflow_run, id: runId, run_attempt: 1 },
      })
      .finally(() => {
        webhookAnswered = true;
      });
    // Either the webhook waits for the run's lock, or (without it) it has routed already.
    await eventually(async () => (webhookAnswered || (await waitingForLocks()) >= 2 ? true : undefined));
    await blocker.query('commit');

    const [stored, deliveries] = await Promise.all([message, webhook]);
    expect(stored.status).toBe(201);
    expect(deliveries.map((d) => d.status)).toEqual([202]);
    const event = await eventually(() =>
      h.zekt.store.db
        .selectFrom('events')
        .select(['route_status', 'message_id'])
        .where('run_id', '=', runId)
        .where('route_status', '=', 'routed')
        .executeTakeFirst(),
    );
    expect(event.message_id).toBe(stored.body.eventId);
    const joined = await h.zekt.store.db
      .selectFrom('messages')
      .select('status')
      .where('message_id', '=', stored.body.eventId)
      .executeTakeFirstOrThrow();
    expect(joined.status).toBe('routed');
  });
});

describe('a message replaced while the router routes its run', () => {
  let r: Harness;
  let blocker: pg.Client;
  beforeAll(async () => {
    // The router runs only when called, and events wait a minute for their message.
    ({ harness: r, blocker } = await startWithBlocker({ workers: false, messageGraceMs: 60_000 }));
  });
  afterAll(async () => {
    await blocker?.end();
    await r?.close();
  });

  it('is refused with 409 (the run was routed with the first message), never a deadlock', async () => {
    const send = async (runId: number, version: string) =>
      r.call('POST', '/api/events/receive', {
        headers: {
          authorization: `Bearer ${await r.sim.mintOidcToken({ repository: 'acme/api', workflow: 'deploy.yml', runId })}`,
        },
        body: { eventType: 'acme-deployed', payload: JSON.stringify({ version }) },
      });
    // The run completes with its first message; the event waits out the grace period, then is due.
    const result = await r.sim.runWorkflow({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      message: { zektUrl: r.url, eventType: 'acme-deployed', payload: { version: '1' } },
    });
    const runId = result.run.id;
    const first = result.message?.body as { eventId: string };
    await r.zekt.store.db.updateTable('events').set({ route_after: 0 }).where('run_id', '=', runId).execute();

    // The router claims the event (its row lock) and stops at its next read, of the workflow.
    await blocker.query('begin');
    await blocker.query('lock table workflows in access exclusive mode');
    const routing = r.zekt.router.routeNext();
    await eventually(async () => ((await waitingForLocksOf(blocker)) >= 1 ? true : undefined));

    // The message sent again for the same run: it must wait for the router's event, holding nothing
    // the router needs next (the message row).
    const replaced = send(runId, '2');
    await eventually(async () => ((await waitingForLocksOf(blocker)) >= 2 ? true : undefined));
    await blocker.query('commit');

    const [routed, answer] = await Promise.all([routing, replaced]);
    expect(routed).toMatchObject({ outcome: 'routed' });
    expect(answer.status).toBe(409);
    const event = await r.zekt.store.db
      .selectFrom('events')
      .select('message_id')
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(event.message_id).toBe(first.eventId);
  });
});
