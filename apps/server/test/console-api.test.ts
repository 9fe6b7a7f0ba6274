import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/**
 * The parts of the management API the console is built on: pages and cursors on every list,
 * Delivery Status filters, a delivery's payload, a connection's history, usage per day, the
 * blocked-events card, and where to install the App.
 */
let h: Harness;
let world: World;

beforeEach(async () => {
  h = await startHarness({ transport: 'inject' });
  world = await setUpWorld(h);
});
afterEach(async () => {
  await h.close();
});

async function delivered(): Promise<{ deliveryId: string; runId: number }> {
  const result = await h.sim.runWorkflow({
    repository: 'acme/api',
    workflow: 'deploy.yml',
    message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { version: '2.0.0' } },
  });
  const deliveryId = await eventually(async () => {
    const list = await h.call('GET', '/api/v1/deliveries', { token: world.providerToken });
    return list.body.deliveries[0]?.dispatch.state === 'accepted'
      ? list.body.deliveries[0].deliveryId
      : undefined;
  });
  return { deliveryId, runId: result.run.id };
}

describe('lists', () => {
  it('page every list with limit and an opaque cursor, and refuse a forged one', async () => {
    const first = await h.call('GET', '/api/v1/accounts/acme/repositories?limit=1', {
      token: world.providerToken,
    });
    expect(first.status).toBe(200);
    expect(first.body.repositories.map((r: { fullName: string }) => r.fullName)).toEqual(['acme/api']);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await h.call(
      'GET',
      `/api/v1/accounts/acme/repositories?limit=1&cursor=${first.body.nextCursor}`,
      { token: world.providerToken },
    );
    expect(second.body.repositories.map((r: { fullName: string }) => r.fullName)).toEqual(['acme/web']);
    expect(second.body.nextCursor).toBeNull();

    for (const [path, code] of [
      ['/api/v1/accounts/acme/repositories?cursor=bm90LWEta2V5', 'invalid_cursor'],
      ['/api/v1/services?cursor=W10', 'invalid_cursor'],
      ['/api/v1/subscriptions?limit=0', 'invalid_request'],
      ['/api/v1/connections?limit=101', 'invalid_request'],
      ['/api/v1/directory?limit=1.5', 'invalid_request'],
      ['/api/v1/deliveries?cursor=delivery-nope', 'invalid_cursor'],
    ] as const) {
      const response = await h.call('GET', path, { token: world.providerToken });
      expect({ path, status: response.status, code: response.body.code }).toEqual({
        path,
        status: 400,
        code,
      });
      expect(response.contentType).toContain('application/problem+json');
    }
  });

  it('pages services by slug across pages, and the directory by search and tag', async () => {
    await h.call('PUT', '/api/v1/repositories/acme/api/workflows/nightly.yml', {
      token: world.providerToken,
      body: { whitelisted: true },
    });
    for (const slug of ['b-nightly', 'a-nightly']) {
      const created = await h.call('POST', '/api/v1/services', {
        token: world.providerToken,
        body: {
          repository: 'acme/api',
          workflow: 'nightly.yml',
          slug,
          tags: ['nightly', 'a_b'],
          published: true,
        },
      });
      expect(created.status).toBe(201);
    }
    const slugs: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { services: Array<{ slug: string }>; nextCursor: string | null } } = await h.call(
        'GET',
        `/api/v1/services?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { token: world.providerToken },
      );
      slugs.push(...page.body.services.map((s) => s.slug));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(slugs).toEqual(['a-nightly', 'acme-deploys', 'b-nightly']);

    const byTag = await h.call('GET', '/api/v1/directory?tag=nightly', { token: world.consumerToken });
    expect(byTag.body.services.map((s: { slug: string }) => s.slug)).toEqual(['a-nightly', 'b-nightly']);
    // A tag is matched whole: "night" is not "nightly"; LIKE's wildcards are plain characters.
    for (const tag of ['night', 'a%b', 'a_']) {
      const none = await h.call('GET', `/api/v1/directory?tag=${encodeURIComponent(tag)}`, {
        token: world.consumerToken,
      });
      expect(none.body.services).toEqual([]);
    }
    const search = await h.call('GET', '/api/v1/directory?q=DEPLOY', { token: world.consumerToken });
    expect(search.body.services.map((s: { slug: string }) => s.slug)).toEqual(['acme-deploys']);
    // The directory does not show what only the provider sees.
    expect(search.body.services[0]).not.toHaveProperty('published');
  });

  it('splits subscriptions and connections by side, and says whether COMPLETION is on', async () => {
    const asProvider = await h.call('GET', '/api/v1/subscriptions?role=provider', {
      token: world.providerToken,
    });
    expect(asProvider.body.subscriptions).toHaveLength(1);
    expect(asProvider.body.subscriptions[0]).toMatchObject({
      deliversTo: 'globex/app',
      completionTracking: false,
      status: 'approved',
    });
    const asConsumer = await h.call('GET', '/api/v1/subscriptions?role=consumer', {
      token: world.providerToken,
    });
    expect(asConsumer.body.subscriptions).toEqual([]);
    const connections = await h.call('GET', '/api/v1/connections?role=consumer', {
      token: world.consumerToken,
    });
    expect(connections.body.connections).toHaveLength(1);
    expect(connections.body.connections[0]).toMatchObject({
      health: 'Healthy',
      hasEvents: false,
      recentActivity: false,
      successRate: null,
    });
    expect(connections.body.thresholds).toEqual({
      healthyPercent: 98,
      warningPercent: 90,
      windowHours: 24,
      recentActivityDays: 7,
    });
    const bad = await h.call('GET', '/api/v1/connections?role=both', { token: world.consumerToken });
    expect(bad.status).toBe(400);
  });

  it('answers a refused decision with the subscription’s current status as an extension', async () => {
    const again = await h.call('POST', `/api/v1/subscriptions/${world.subscriptionId}/approve`, {
      token: world.providerToken,
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: 'invalid_transition',
      title: 'Invalid transition',
      statusCurrent: 'approved',
    });
  });
});

describe('Delivery Status', () => {
  it('filters by side, repository, run id and time', async () => {
    const { deliveryId, runId } = await delivered();
    const ids = async (query: string, token = world.providerToken) =>
      (await h.call('GET', `/api/v1/deliveries?${query}`, { token })).body.deliveries.map(
        (d: { deliveryId: string }) => d.deliveryId,
      );
    expect(await ids('side=provider')).toEqual([deliveryId]);
    expect(await ids('side=consumer')).toEqual([]);
    expect(await ids('side=consumer', world.consumerToken)).toEqual([deliveryId]);
    expect(await ids('repository=globex/app')).toEqual([deliveryId]);
    expect(await ids('repository=acme/api')).toEqual([deliveryId]);
    expect(await ids('repository=acme/web')).toEqual([]);
    expect(await ids(`runId=${runId}`)).toEqual([deliveryId]);
    expect(await ids('runId=1')).toEqual([]);
    expect(await ids('until=2020-01-01T00:00:00Z')).toEqual([]);
    expect(await ids(`until=${new Date(Date.now() + 60_000).toISOString()}`)).toEqual([deliveryId]);
    const bad = await h.call('GET', '/api/v1/deliveries?until=yesterday', { token: world.providerToken });
    expect(bad.body).toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('shows what a delivery carried and links the provider run', async () => {
    const { deliveryId, runId } = await delivered();
    const record = await h.call('GET', `/api/v1/deliveries/${deliveryId}`, { token: world.consumerToken });
    expect(record.body.provider.runUrl).toBe(`${h.sim.url}/acme/api/actions/runs/${runId}`);
    const payload = await h.call('GET', `/api/v1/deliveries/${deliveryId}/payload`, {
      token: world.consumerToken,
    });
    expect(payload.status).toBe(200);
    expect(payload.body).toMatchObject({
      deliveryId,
      hasMessage: true,
      payload: { version: '2.0.0' },
      event: { repository: 'acme/api', runId: String(runId), workflowPath: '.github/workflows/deploy.yml' },
    });
    expect(Date.parse(payload.body.expiresAt) - Date.parse(payload.body.archivedAt)).toBe(90 * 86_400_000);
  });
});

describe('My Connections and Usage', () => {
  it('charts a connection per day and usage per day', async () => {
    await delivered();
    const history = await h.call('GET', `/api/v1/connections/${world.subscriptionId}/history?days=3`, {
      token: world.consumerToken,
    });
    expect(history.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(history.body.days).toHaveLength(3);
    expect(history.body.days[2]).toEqual({ day: today, total: 1, succeeded: 1, failed: 0, successRate: 100 });
    expect(history.body.days[0]).toMatchObject({ total: 0, successRate: null });
    for (const days of ['0', '91', 'x']) {
      const bad = await h.call('GET', `/api/v1/connections/${world.subscriptionId}/history?days=${days}`, {
        token: world.consumerToken,
      });
      expect(bad.status).toBe(400);
    }

    const usage = await h.call('GET', '/api/v1/usage?account=globex', { token: world.consumerToken });
    const days = usage.body.usage[0].days as Array<{ day: string; counters: { dispatchApiCalls: number } }>;
    expect(days.at(-1)).toMatchObject({ day: today, counters: { dispatchApiCalls: 1 } });
    expect(days.map((d) => d.day)).toEqual(
      Array.from(
        { length: Number(today.slice(8)) },
        (_, i) => `${today.slice(0, 8)}${String(i + 1).padStart(2, '0')}`,
      ),
    );
  });

  it('fills the blocked-events card: allowed, blocked, block rate, top workflows', async () => {
    await delivered();
    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'lint.yml', name: 'Lint' });
    const blocked = await eventually(async () => {
      const card = await h.call('GET', '/api/v1/blocked?account=acme', { token: world.providerToken });
      return card.body.blockedEvents === 1 ? card.body : undefined;
    });
    expect(blocked).toMatchObject({
      eventsReceived: 2,
      allowedEvents: 1,
      blockedEvents: 1,
      blockRate: 50,
      orphanedMessages: 0,
      topWorkflows: [{ repository: 'acme/api', workflow: 'lint.yml', name: 'Lint', blocked: 1 }],
    });
  });

  it('says where to install the App', async () => {
    const me = await h.call('GET', '/api/v1/me', { token: world.consumerToken });
    expect(me.body.installUrl).toBe(`${h.sim.url}/apps/${h.sim.app.slug}/installations/new`);
  });
});
