import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAlertService } from '../src/alerts/alert-service.js';
import { createManualClock, type ManualClock } from '../src/domain/clock.js';
import { parseWebhookSecret } from '../src/security/standard-webhooks.js';
import { makeDurable, runWhileConsumerRefuses, setUpWorld, type World } from './support/demo-world.js';
import { eventually, freePort, type Harness, startHarness } from './support/harness.js';
import { verifyStandardWebhook } from './support/standard-webhooks-verifier.js';

/**
 * Operational alerts: raised when a connection's health changes and when a durable
 * delivery exhausts its retries, sent signed (Standard Webhooks) to a receiver on loopback,
 * retried on their own schedule, deduplicated, and listed per account.
 */
interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

async function startAlertReceiver() {
  const received: Received[] = [];
  let status = 200;
  let location: string | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status, location === undefined ? {} : { location }).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/zekt-alerts`,
    received,
    answer(next: number, redirectTo?: string) {
      status = next;
      location = redirectTo;
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

const secret = `whsec_${randomBytes(32).toString('base64')}`;

describe('alerts', () => {
  let h: Harness;
  let world: World;
  let clock: ManualClock;
  let receiver: Awaited<ReturnType<typeof startAlertReceiver>>;
  beforeEach(async () => {
    receiver = await startAlertReceiver();
    clock = createManualClock(Date.now());
    h = await startHarness({
      transport: 'inject',
      clock,
      env: {
        ZEKT_ALERT_URL: receiver.url,
        ZEKT_ALERT_SECRET: secret,
        ZEKT_RETRY_SCHEDULE: '0s',
        ZEKT_RECONCILE_INTERVAL_MS: '0',
      },
    });
    world = await setUpWorld(h);
  });
  afterEach(async () => {
    await h.close();
    await receiver.close();
  });

  it('sends a connection turning Critical, signed, verified by an independent Standard Webhooks check; retries; lists it for the consumer only', async () => {
    // The consumer's repository refuses every dispatch: the connection's only delivery fails.
    await runWhileConsumerRefuses(h, 404);
    await eventually(async () => {
      const page = await h.call('GET', '/api/v1/deliveries', { token: world.consumerToken });
      return page.body.deliveries?.[0]?.deliveryStatus === 'Failed' ? true : undefined;
    });

    receiver.answer(503);
    await h.zekt.alerts.checkHealth();
    await h.zekt.alerts.sendDue();
    // Sent by this call or by the worker's alert loop, whichever claimed it first.
    const first = await eventually(async () => {
      const page = await h.call('GET', '/api/v1/alerts', { token: world.consumerToken });
      return page.body.alerts[0]?.attempts === 1 ? page : undefined;
    });
    expect(receiver.received).toHaveLength(1);
    expect(first.body.alerts).toMatchObject([
      {
        kind: 'connection.critical',
        status: 'pending',
        attempts: 1,
        lastError: 'error_status',
      },
    ]);

    // Its own retry schedule: 10 s later, the receiver is back.
    receiver.answer(200);
    clock.advance(10_000);
    await h.zekt.alerts.sendDue();
    await eventually(async () => {
      const page = await h.call('GET', '/api/v1/alerts', { token: world.consumerToken });
      return page.body.alerts[0]?.status === 'sent' ? true : undefined;
    });
    expect(receiver.received).toHaveLength(2);
    const [failedTry, delivered] = receiver.received;
    expect(delivered?.headers['content-type']).toBe('application/json');
    expect(delivered?.headers['webhook-id']).toBe(failedTry?.headers['webhook-id']);
    expect(
      await verifyStandardWebhook({
        secret,
        headers: delivered?.headers ?? {},
        body: delivered?.body ?? '',
        nowSeconds: Math.floor(clock.now() / 1000),
      }),
    ).toEqual({ ok: true });
    // A tampered body or another secret does not verify.
    expect(
      (
        await verifyStandardWebhook({
          secret,
          headers: delivered?.headers ?? {},
          body: `${delivered?.body} `,
          nowSeconds: Math.floor(clock.now() / 1000),
        })
      ).ok,
    ).toBe(false);
    expect(
      (
        await verifyStandardWebhook({
          secret: `whsec_${randomBytes(32).toString('base64')}`,
          headers: delivered?.headers ?? {},
          body: delivered?.body ?? '',
          nowSeconds: Math.floor(clock.now() / 1000),
        })
      ).ok,
    ).toBe(false);
    const body = JSON.parse(delivered?.body ?? '{}');
    expect(body).toMatchObject({
      type: 'connection.critical',
      data: {
        alertId: delivered?.headers['webhook-id'],
        connectionId: world.subscriptionId,
        provider: 'acme/api',
        consumer: 'globex/app',
        health: 'Critical',
        previousHealth: 'Healthy',
        successRate: 0,
      },
    });

    const listed = await h.call('GET', '/api/v1/alerts', { token: world.consumerToken });
    expect(listed.body).toMatchObject({
      alerts: [
        {
          id: body.data.alertId,
          account: 'globex',
          kind: 'connection.critical',
          status: 'sent',
          attempts: 2,
        },
      ],
      nextCursor: null,
    });
    // Scoped by account: the provider's members do not see the consumer's alerts.
    expect((await h.call('GET', '/api/v1/alerts', { token: world.providerToken })).body.alerts).toEqual([]);
    const foreign = await h.call('GET', '/api/v1/alerts?account=globex', { token: world.providerToken });
    expect(foreign.status).toBe(404);
    expect(foreign.contentType).toContain('application/problem+json');

    // Deduplicated over the window: the same alert about the same connection is not raised again.
    const globex = await h.zekt.store.db
      .selectFrom('accounts')
      .select('account_id')
      .where('login', '=', 'globex')
      .executeTakeFirstOrThrow();
    const again = { accountId: Number(globex.account_id), kind: 'connection.critical' as const };
    expect(await h.zekt.alerts.raise({ ...again, subject: world.subscriptionId, data: {} })).toBe(false);
    expect(await h.zekt.alerts.raise({ ...again, subject: 'sub_other', data: {} })).toBe(true);
  });

  it("does not follow the receiver's redirects: a 3xx is a failed send (redirect), nothing reaches the other host", async () => {
    const elsewhere = await startAlertReceiver();
    try {
      await runWhileConsumerRefuses(h, 404);
      await eventually(async () => {
        const page = await h.call('GET', '/api/v1/deliveries', { token: world.consumerToken });
        return page.body.deliveries?.[0]?.deliveryStatus === 'Failed' ? true : undefined;
      });
      await h.zekt.alerts.checkHealth();
      const sends: Array<[number, number, number]> = [
        [1, 307, 10_000],
        [2, 302, 60_000],
        [3, 308, 0],
      ];
      let alertId: string | undefined;
      for (const [attempt, status, untilNext] of sends) {
        receiver.answer(status, elsewhere.url);
        await h.zekt.alerts.sendDue();
        const alert = await eventually(async () => {
          const answer = await h.call('GET', '/api/v1/alerts', { token: world.consumerToken });
          const found = answer.body.alerts.find((a: { id: string; kind: string }) =>
            alertId === undefined ? a.kind === 'connection.critical' : a.id === alertId,
          );
          return found?.attempts === attempt ? found : undefined;
        });
        alertId = alert.id;
        expect(alert).toMatchObject({ status: 'pending', lastError: 'redirect' });
        clock.advance(untilNext);
      }
      expect(receiver.received.filter((r) => r.headers['webhook-id'] === alertId)).toHaveLength(3);
      expect(elsewhere.received).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it('raises delivery.exhausted when a durable delivery has used its retry schedule', async () => {
    await makeDurable(h, world);
    await runWhileConsumerRefuses(h, 503);
    const exhausted = await eventually(async () => {
      const page = await h.call('GET', '/api/v1/alerts', { token: world.consumerToken });
      return page.body.alerts.find((a: { kind: string }) => a.kind === 'delivery.exhausted');
    });
    expect(exhausted.data).toMatchObject({
      connectionId: world.subscriptionId,
      eventType: 'acme-deployed',
      attempts: 1,
      lastFailure: expect.stringContaining('HTTP 503'),
    });
    expect(exhausted.data.deliveryId).toMatch(/^delivery-/);
  });
});

describe('alerts about deliveries not started', () => {
  it('raises delivery.not_started once per connection when deliveries are flagged not started', async () => {
    const receiver = await startAlertReceiver();
    const clock = createManualClock(Date.now());
    const h = await startHarness({
      transport: 'inject',
      clock,
      env: { ZEKT_ALERT_URL: receiver.url, ZEKT_ALERT_SECRET: secret, ZEKT_RECONCILE_INTERVAL_MS: '0' },
    });
    try {
      const world = await setUpWorld(h);
      await makeDurable(h, world);
      // No consumer workflow listens: GitHub accepts the dispatch (204) and nothing starts.
      await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
      const deliveryId = await eventually(async () => {
        const page = await h.call('GET', '/api/v1/deliveries', { token: world.consumerToken });
        const [delivery] = page.body.deliveries ?? [];
        return delivery?.dispatch?.state === 'accepted' ? (delivery.deliveryId as string) : undefined;
      });
      clock.advance(h.config.notStartedAfterMs);
      // Flagged by this call, or by the worker's own pass if it came first.
      await h.zekt.notStarted.flag();
      const alert = await eventually(async () => {
        const page = await h.call('GET', '/api/v1/alerts', { token: world.consumerToken });
        return page.body.alerts.find((a: { kind: string }) => a.kind === 'delivery.not_started');
      });
      expect(alert.data).toMatchObject({
        connectionId: world.subscriptionId,
        eventType: 'acme-deployed',
        deliveryIds: [deliveryId],
        count: 1,
        recommendation: expect.stringContaining('types: [acme-deployed]'),
      });
      await h.zekt.alerts.sendDue();
      const sent = await eventually(() =>
        receiver.received.find((r) => JSON.parse(r.body).type === 'delivery.not_started'),
      );
      expect(
        await verifyStandardWebhook({
          secret,
          headers: sent.headers,
          body: sent.body,
          nowSeconds: Math.floor(clock.now() / 1000),
        }),
      ).toEqual({ ok: true });
    } finally {
      await h.close();
      await receiver.close();
    }
  });
});

/**
 * `zekt serve` (the build) with the settings it requires and these, on a data directory of its
 * own; stopped after 20 s should it start instead of refusing, so the test fails rather than hangs.
 */
function serveWith(env: Record<string, string>) {
  const cli = resolve(import.meta.dirname, '../dist/cli/main.js');
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(GITHUB_|ZEKT_|DATABASE_URL|PORT|NODE_ENV)/.test(name)),
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'zekt-alert-settings-'));
  try {
    return spawnSync(process.execPath, [cli, 'serve'], {
      encoding: 'utf8',
      timeout: 20_000,
      env: {
        ...clean,
        PORT: '0',
        ZEKT_METRICS_PORT: '0',
        ZEKT_DATA_DIR: dataDir,
        GITHUB_APP_ID: '1',
        GITHUB_PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----',
        GITHUB_WEBHOOK_SECRET: 'whsec',
        ZEKT_SECRET: 'f'.repeat(64),
        ZEKT_ALERT_SECRET: secret,
        ...env,
      },
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('alert settings', () => {
  it('refuses to start in production with a non-https ZEKT_ALERT_URL, naming the setting', () => {
    const result = serveWith({
      NODE_ENV: 'production',
      ZEKT_BASE_URL: 'https://zekt.example.com',
      ZEKT_ALERT_URL: 'http://alerts.example.com/zekt',
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('ZEKT_ALERT_URL must use https in production');
    expect(result.stderr).not.toContain('    at ');
  });
});

describe('alert receiver credentials', () => {
  it('refuses ZEKT_ALERT_URL with a user name or password at start, naming the setting, never quoting the password', () => {
    const result = serveWith({ ZEKT_ALERT_URL: 'http://ops:hunter2@127.0.0.1:9/zekt-alerts' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('ZEKT_ALERT_URL must not hold a user name or password');
    expect(result.stderr).not.toContain('hunter2');
    expect(result.stderr).not.toContain('    at ');
  });

  it("shows the account's members an error category, never the receiver's error; the operator's log has no credentials", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const h = await startHarness({ env: { ZEKT_RECONCILE_INTERVAL_MS: '0' } });
    try {
      const world = await setUpWorld(h);
      const globex = await h.zekt.store.db
        .selectFrom('accounts')
        .select('account_id')
        .where('login', '=', 'globex')
        .executeTakeFirstOrThrow();
      // A closed port, and a URL with credentials as an older version accepted: the service is
      // built the way createZekt builds it, from settings that skip the start-up check.
      const closed = await freePort();
      for (const [url, category] of [
        [`http://ops:hunter2@127.0.0.1:${closed}/zekt-alerts`, 'unreachable'],
        [`http://127.0.0.1:${closed}/zekt-alerts?token=hunter2`, 'unreachable'],
      ] as const) {
        await h.zekt.store.db.deleteFrom('alerts').execute();
        const alerts = createAlertService({
          store: h.zekt.store,
          clock: { now: () => Date.now() },
          logger: pino({ level: 'info' }, sink),
          settings: { url, key: parseWebhookSecret(secret), dedupWindowMs: 0 },
          owner: 'alerts-test',
        });
        await alerts.raise({
          accountId: Number(globex.account_id),
          kind: 'connection.critical',
          subject: world.subscriptionId,
          data: { connectionId: world.subscriptionId },
        });
        expect(await alerts.sendDue()).toBe(1);
        const listed = await h.call('GET', '/api/v1/alerts', { token: world.consumerToken });
        expect(listed.body.alerts).toMatchObject([{ status: 'pending', attempts: 1, lastError: category }]);
        expect(JSON.stringify(listed.body)).not.toContain('hunter2');
      }
      const warnings = lines.filter((line) => line.includes('alert not sent'));
      expect(warnings).toHaveLength(2);
      for (const line of warnings) {
        expect(JSON.parse(line)).toMatchObject({ category: 'unreachable', error: expect.any(String) });
      }
      expect(lines.join('')).not.toContain('hunter2');
    } finally {
      await h.close();
    }
  });
});

describe('an alert commits with the change it is about', () => {
  // The store refuses alerts for a while (a trigger: a real failure of the real database). The
  // change an alert is about must not commit without it: an alert written after its change, in a
  // transaction of its own, is lost when that write fails or the process dies between the two.
  // The worker loops are off: the test runs each pass itself.
  it('a delivery is never Failed for exhausted retries, or flagged not started, without its alert', async () => {
    const clock = createManualClock(Date.now());
    const h = await startHarness({
      transport: 'inject',
      workers: false,
      clock,
      env: {
        ZEKT_RETRY_SCHEDULE: '0s',
        ZEKT_RECONCILE_INTERVAL_MS: '0',
        ZEKT_INSTALLATION_DISPATCH_RATE: '0',
      },
    });
    const db = h.zekt.store.db;
    const postgres = h.zekt.store.dialect === 'postgres';
    const refuseAlerts = async () => {
      if (postgres) {
        await sql`CREATE FUNCTION refuse_alerts() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'alerts refused'; END $$`.execute(
          db,
        );
        await sql`CREATE TRIGGER refuse_alerts BEFORE INSERT ON alerts FOR EACH ROW EXECUTE FUNCTION refuse_alerts()`.execute(
          db,
        );
      } else {
        await sql`CREATE TRIGGER refuse_alerts BEFORE INSERT ON alerts BEGIN SELECT RAISE(ABORT, 'alerts refused'); END`.execute(
          db,
        );
      }
    };
    const allowAlerts = async () => {
      await sql`DROP TRIGGER refuse_alerts${sql.raw(postgres ? ' ON alerts' : '')}`.execute(db);
      if (postgres) await sql`DROP FUNCTION refuse_alerts()`.execute(db);
    };
    const alertsAbout = (kind: string, subject: string) =>
      db.selectFrom('alerts').select('alert_id').where('dedup_key', '=', `${kind}:${subject}`).execute();
    const delivery = (id: string) =>
      db
        .selectFrom('deliveries')
        .select(['status', 'failure_reason', 'not_started_at'])
        .where('delivery_id', '=', id)
        .executeTakeFirstOrThrow();
    /** The delivery the router made of the newest run (routed here: no worker does it). */
    const routed = (seen: string[]) =>
      eventually(async () => {
        await h.zekt.router.routeDue();
        const rows = await db.selectFrom('deliveries').select('delivery_id').execute();
        return rows.map((row) => row.delivery_id).find((id) => !seen.includes(id));
      });
    const dispatch = async () => {
      await h.zekt.dispatcher.dispatchDue();
      await h.zekt.dispatcher.idle();
    };
    try {
      const world = await setUpWorld(h);
      await makeDurable(h, world);

      // Exhausted: GitHub refuses the only attempt while no alert can be stored.
      await runWhileConsumerRefuses(h, 503);
      const refused = await routed([]);
      await refuseAlerts();
      await dispatch();
      expect((await delivery(refused)).status).not.toBe('Failed');
      expect(await alertsAbout('delivery.exhausted', refused)).toHaveLength(0);
      // Its lease runs out and the next pass tries again (GitHub still refusing) and settles it, alert and all.
      await allowAlerts();
      h.sim.injectFaults({
        method: 'POST',
        path: '/repos/globex/app/dispatches',
        faults: [{ kind: 'status', status: 503 }],
      });
      clock.advance(h.config.leaseMs + 1);
      await dispatch();
      expect(await delivery(refused)).toMatchObject({
        status: 'Failed',
        failure_reason: 'dispatch_exhausted',
      });
      expect(await alertsAbout('delivery.exhausted', refused)).toHaveLength(1);

      // Not started: GitHub accepts (no consumer workflow listens) and nothing starts.
      h.sim.clearFaults();
      await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
      const accepted = await routed([refused]);
      await dispatch();
      clock.advance(h.config.notStartedAfterMs);
      await refuseAlerts();
      await expect(h.zekt.notStarted.flag()).rejects.toThrow(/alerts refused/);
      expect((await delivery(accepted)).not_started_at).toBeNull();
      await allowAlerts();
      expect((await h.zekt.notStarted.flag()).map((f) => f.deliveryId)).toEqual([accepted]);
      expect((await delivery(accepted)).not_started_at).not.toBeNull();
      expect(await alertsAbout('delivery.not_started', world.subscriptionId)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});
