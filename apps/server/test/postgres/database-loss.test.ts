import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDurable, setUpWorld, type World } from '../support/demo-world.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';
import { createTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/**
 * Losing the database while running: readiness fails, requests that need the store get
 * 503 problem+json instead of an acknowledgement, nothing acknowledged before is lost, and the
 * service recovers by itself when the database is back. The database is taken away by cutting a
 * TCP proxy in front of the shared PostgreSQL server.
 */
let proxy: TcpProxy;
let h: Harness;
let world: World;

beforeAll(async () => {
  proxy = await createTcpProxy({ host: '127.0.0.1', port: 5432 });
  h = await startHarness({
    transport: 'inject',
    env: {
      ZEKT_RETRY_SCHEDULE: `0ms,${Array(40).fill('250ms').join(',')}`,
      ZEKT_INSTALLATION_DISPATCH_RATE: '0',
    },
    rewriteDatabaseUrl: (url) => {
      const parsed = new URL(url);
      parsed.port = String(proxy.port);
      return parsed.toString();
    },
  });
  world = await setUpWorld(h);
  await makeDurable(h, world);
});

afterAll(async () => {
  await proxy.restore().catch(() => undefined);
  await h?.close();
  await proxy?.close();
});

describe('database loss', () => {
  it('answers 503 while the database is gone and recovers without losing what it acknowledged', async () => {
    // An event acknowledged before the outage whose dispatch GitHub keeps refusing meanwhile.
    const fault = h.sim.injectFaults({
      method: 'POST',
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'status', status: 503 }],
      repeat: true,
    });
    const before = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    expect(before.webhooks.map((w) => w.status)).toEqual([202]);
    await eventually(async () => {
      const rows = await h.zekt.store.db.selectFrom('delivery_attempts').select('attempt_id').execute();
      return rows.length > 0 ? true : undefined;
    });

    await proxy.cut();
    const ready = await h.call('GET', '/readyz');
    expect([ready.status, ready.body.code]).toEqual([503, 'store_unavailable']);
    const during = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    expect(during.webhooks[0]!.status).toBe(503);
    expect(JSON.parse(during.webhooks[0]!.responseBody ?? '{}')).toMatchObject({
      code: 'store_unavailable',
      status: 503,
    });
    const api = await h.call('GET', '/api/v1/me', { token: world.providerToken });
    expect([api.status, api.contentType.split(';')[0], api.body.code]).toEqual([
      503,
      'application/problem+json',
      'store_unavailable',
    ]);
    // The process is up: /metrics (on its metrics port) answers, counts the outage, and reads the
    // queue as unknown.
    const metrics = await fetch(`${h.zekt.metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    const scraped = parsePrometheusText(await metrics.text());
    expect(sampleValue(scraped, 'zekt_store_errors_total', { category: 'unavailable' })).toBeGreaterThan(0);
    expect(sampleValue(scraped, 'zekt_webhooks_received_total', { outcome: 'error' })).toBe(1);
    expect(sampleValue(scraped, 'zekt_queue_depth')).toBeNaN();

    h.sim.clearFaults(fault.id);
    await proxy.restore();
    await eventually(
      async () => ((await h.call('GET', '/readyz')).status === 200 ? true : undefined),
      20_000,
    );

    // The acknowledged event goes out; the one refused during the outage is redelivered (GitHub's
    // "Redeliver"), accepted and goes out too.
    const redelivered = await h.sim.redeliver(during.webhooks[0]!.guid);
    expect(redelivered.status).toBe(202);
    const dispatched = await eventually(() => {
      const ids = h.sim
        .dispatches({ repository: 'globex/app' })
        .map((d) => (d.clientPayload as { zekt: { correlationId: string } }).zekt.correlationId);
      return ids.includes(String(before.run.id)) && ids.includes(String(during.run.id)) ? ids : undefined;
    }, 20_000);
    expect(dispatched.sort()).toEqual([String(before.run.id), String(during.run.id)].sort());
  });
});
