import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../src/domain/clock.js';
import {
  makeDurable,
  runWhileConsumerRefuses,
  setUpWorld,
  type World,
} from '../src/test-support/demo-world.js';
import { eventually, type Harness, startHarness } from '../src/test-support/harness.js';
import { verifyStandardWebhook } from '../src/test-support/standard-webhooks-verifier.js';

/**
 * Operational alerts (issue 12 §5): raised when a connection's health changes and when a durable
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
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/zekt-alerts`,
    received,
    answer(next: number) {
      status = next;
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
        lastError: 'the alert receiver answered HTTP 503',
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

describe('alert settings', () => {
  it('refuses to start in production with a non-https ZEKT_ALERT_URL, naming the setting', () => {
    const cli = resolve(import.meta.dirname, '../dist/cli/main.js');
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !/^(GITHUB_|ZEKT_|DATABASE_URL|PORT|NODE_ENV)/.test(name),
      ),
    );
    const result = spawnSync(process.execPath, [cli, 'serve'], {
      encoding: 'utf8',
      env: {
        ...clean,
        NODE_ENV: 'production',
        ZEKT_BASE_URL: 'https://zekt.example.com',
        GITHUB_APP_ID: '1',
        GITHUB_PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----',
        GITHUB_WEBHOOK_SECRET: 'whsec',
        ZEKT_SECRET: 'f'.repeat(64),
        ZEKT_ALERT_URL: 'http://alerts.example.com/zekt',
        ZEKT_ALERT_SECRET: secret,
      },
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('ZEKT_ALERT_URL must use https in production');
    expect(result.stderr).not.toContain('    at ');
  });
});
