import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

describe('management API', () => {
  let h: Harness;
  let world: World;
  let malloryToken: string;
  let orgOnlyServiceId: string;
  let deliveryId: string;
  beforeAll(async () => {
    h = await startHarness({ transport: 'inject' });
    world = await setUpWorld(h);
    await h.sim.createInstallation({
      account: { login: 'initech', type: 'Organization' },
      repositories: ['tps'],
      sender: { login: 'mallory' },
    });
    malloryToken = await h.tokenFor('mallory');
    await h.call('PUT', '/api/v1/repositories/acme/api/workflows/internal.yml', {
      token: world.providerToken,
      body: { whitelisted: true },
    });
    const orgOnly = await h.call('POST', '/api/v1/services', {
      token: world.providerToken,
      body: {
        repository: 'acme/api',
        workflow: 'internal.yml',
        slug: 'acme-internal',
        visibility: 'organization',
        published: true,
      },
    });
    expect(orgOnly.status).toBe(201);
    orgOnlyServiceId = orgOnly.body.id;
    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
    deliveryId = (dispatch.clientPayload as { zekt: { deliveryId: string } }).zekt.deliveryId;
  });
  afterAll(async () => {
    await h.close();
  });

  it('knows who is calling and which accounts they act for', async () => {
    const me = await h.call('GET', '/api/v1/me', { token: world.providerToken });
    expect(me.status).toBe(200);
    expect(me.body.user.login).toBe('alice');
    expect(me.body.accounts.map((a: { login: string }) => a.login)).toEqual(['acme']);
    const noToken = await h.call('GET', '/api/v1/me');
    expect([noToken.status, noToken.body.code]).toEqual([401, 'unauthenticated']);
    const badToken = await h.call('GET', '/api/v1/me', {
      token: 'zkt_nottherealtokennottherealtokennottherealtok',
    });
    expect([badToken.status, badToken.body.code]).toEqual([401, 'invalid_token']);
  });

  it('lists repositories with their flags and places the provider webhook in GitHub', async () => {
    const repos = await h.call('GET', '/api/v1/accounts/acme/repositories', { token: world.providerToken });
    expect(repos.body.repositories).toEqual([
      expect.objectContaining({
        fullName: 'acme/api',
        provider: { enabled: true },
        completionTracking: { enabled: false },
      }),
      expect.objectContaining({ fullName: 'acme/web', provider: { enabled: false } }),
    ]);
    const hooksCreated = h.sim
      .journal()
      .filter((e) => e.method === 'POST' && e.path === '/api/v3/repos/acme/api/hooks' && e.status === 201);
    expect(hooksCreated).toHaveLength(1);
    expect(hooksCreated[0]!.requestBody).toMatchObject({
      events: ['workflow_run'],
      config: { url: `${h.url}/webhooks/github`, content_type: 'json' },
    });
    const stored = await h.zekt.store.db.selectFrom('repository_hooks').selectAll().executeTakeFirstOrThrow();
    const secret = (hooksCreated[0]!.requestBody as { config: { secret: string } }).config.secret;
    expect(stored.secret_encrypted).not.toContain(secret);
    // GitHub pinged the new hook; Zekt verified it with the hook's secret.
    const ping = h.sim.webhookDeliveries().find((d) => d.event === 'ping' && d.repository === 'acme/api');
    expect(ping?.status).toBe(200);
  });

  it('turns the provider switch off and on again, removing and re-placing the hook', async () => {
    await h.call('PUT', '/api/v1/repositories/acme/web/provider', {
      token: world.providerToken,
      body: { enabled: true },
    });
    const off = await h.call('PUT', '/api/v1/repositories/acme/web/provider', {
      token: world.providerToken,
      body: { enabled: false },
    });
    expect(off.body.provider).toEqual({ enabled: false });
    expect(
      h.sim
        .journal()
        .some(
          (e) =>
            e.method === 'DELETE' && e.path.startsWith('/api/v3/repos/acme/web/hooks/') && e.status === 204,
        ),
    ).toBe(true);
    const again = await h.call('PUT', '/api/v1/repositories/acme/web/provider', {
      token: world.providerToken,
      body: { enabled: true },
    });
    expect(again.body.provider).toEqual({ enabled: true });
  });

  it('validates service input and explains what to do', async () => {
    const create = (body: Record<string, unknown>) =>
      h.call('POST', '/api/v1/services', { token: world.providerToken, body });
    const base = { repository: 'acme/api', workflow: 'deploy.yml', slug: 'other' };
    expect((await create({ ...base, slug: 'acme-deploys' })).body.code).toBe('slug_taken');
    expect((await create({ ...base, slug: 'Not OK' })).body.code).toBe('invalid_slug');
    expect((await create({ ...base, workflow: 'nightly.yml' })).body.code).toBe('workflow_not_whitelisted');
    expect((await create({ ...base, workflow: '../x' })).body.code).toBe('invalid_workflow_file');
    expect((await create({ ...base, eventType: 'has space' })).body.code).toBe('invalid_event_type');
    expect((await create({ ...base, repository: 'acme/web', slug: 'web' })).body.code).toMatch(
      /provider_not_enabled|workflow_not_whitelisted/,
    );
    const unknownField = await create({ ...base, surprise: true });
    expect([unknownField.status, unknownField.body.code]).toEqual([400, 'invalid_request']);
    const wrongType = await h.call('PUT', '/api/v1/repositories/acme/api/provider', {
      token: world.providerToken,
      body: { enabled: 'yes' },
    });
    expect([wrongType.status, wrongType.body.code]).toEqual([400, 'invalid_request']);
  });

  it('shows organisation-only services to members only, and finds services by text and tag', async () => {
    const bobSees = await h.call('GET', '/api/v1/directory', { token: world.consumerToken });
    expect(bobSees.body.services.map((s: { slug: string }) => s.slug)).toEqual(['acme-deploys']);
    const aliceSees = await h.call('GET', '/api/v1/directory', { token: world.providerToken });
    expect(aliceSees.body.services.map((s: { slug: string }) => s.slug).sort()).toEqual([
      'acme-deploys',
      'acme-internal',
    ]);
    expect(
      (await h.call('GET', '/api/v1/directory?q=DEPLOYMENTS', { token: world.consumerToken })).body.services,
    ).toHaveLength(1);
    expect(
      (await h.call('GET', '/api/v1/directory?tag=deploy', { token: world.consumerToken })).body.services,
    ).toHaveLength(1);
    expect(
      (await h.call('GET', '/api/v1/directory?tag=nothing', { token: world.consumerToken })).body.services,
    ).toHaveLength(0);
    expect(
      (await h.call('GET', '/api/v1/directory?q=%25', { token: world.consumerToken })).body.services,
    ).toHaveLength(0);
  });

  it('moves subscriptions through request → approve/deny → revoke, refusing the rest', async () => {
    const duplicate = await h.call('POST', '/api/v1/subscriptions', {
      token: world.consumerToken,
      body: { serviceId: world.serviceId, deliversTo: 'globex/app' },
    });
    expect([duplicate.status, duplicate.body.code]).toEqual([409, 'subscription_exists']);
    const again = await h.call('POST', `/api/v1/subscriptions/${world.subscriptionId}/approve`, {
      token: world.providerToken,
    });
    expect([again.status, again.body.code]).toEqual([409, 'invalid_transition']);
    const list = await h.call('GET', '/api/v1/subscriptions', { token: world.consumerToken });
    expect(list.body.subscriptions).toEqual([
      expect.objectContaining({
        id: world.subscriptionId,
        status: 'approved',
        durable: false,
        deliversTo: 'globex/app',
        provider: { account: 'acme', repository: 'acme/api', workflow: 'deploy.yml' },
        consumer: { account: 'globex', repository: 'globex/app' },
      }),
    ]);
    const durable = await h.call('PATCH', `/api/v1/subscriptions/${world.subscriptionId}`, {
      token: world.consumerToken,
      body: { durable: true },
    });
    expect([durable.status, durable.body.code]).toEqual([409, 'completion_tracking_disabled']);
  });

  it('answers 404 for every route on objects of accounts the caller is not a member of, and changes nothing', async () => {
    const snapshot = async () => ({
      repositories: await h.zekt.store.db
        .selectFrom('repositories')
        .selectAll()
        .orderBy('repository_id')
        .execute(),
      workflows: await h.zekt.store.db.selectFrom('workflows').selectAll().orderBy('path').execute(),
      services: await h.zekt.store.db.selectFrom('services').selectAll().orderBy('service_id').execute(),
      subscriptions: await h.zekt.store.db
        .selectFrom('subscriptions')
        .selectAll()
        .orderBy('subscription_id')
        .execute(),
      hooks: await h.zekt.store.db
        .selectFrom('repository_hooks')
        .selectAll()
        .orderBy('repository_id')
        .execute(),
    });
    const before = await snapshot();
    const sub = world.subscriptionId;
    const svc = world.serviceId;
    // [method, route template, concrete path, body]
    const attempts: Array<[string, string, string, unknown?]> = [
      ['GET', '/api/v1/accounts/{account}/repositories', '/api/v1/accounts/acme/repositories'],
      [
        'PUT',
        '/api/v1/repositories/{owner}/{repo}/provider',
        '/api/v1/repositories/acme/web/provider',
        { enabled: true },
      ],
      [
        'PUT',
        '/api/v1/repositories/{owner}/{repo}/provider',
        '/api/v1/repositories/acme/api/provider',
        { enabled: false },
      ],
      [
        'PUT',
        '/api/v1/repositories/{owner}/{repo}/completion-tracking',
        '/api/v1/repositories/globex/app/completion-tracking',
        { enabled: true },
      ],
      ['GET', '/api/v1/repositories/{owner}/{repo}/workflows', '/api/v1/repositories/acme/api/workflows'],
      [
        'PUT',
        '/api/v1/repositories/{owner}/{repo}/workflows/{file}',
        '/api/v1/repositories/acme/api/workflows/deploy.yml',
        { whitelisted: false },
      ],
      [
        'POST',
        '/api/v1/services',
        '/api/v1/services',
        { repository: 'acme/api', workflow: 'deploy.yml', slug: 'stolen' },
      ],
      ['GET', '/api/v1/services/{id}', `/api/v1/services/${svc}`],
      ['PATCH', '/api/v1/services/{id}', `/api/v1/services/${svc}`, { published: false }],
      [
        'PUT',
        '/api/v1/services/{id}/schema',
        `/api/v1/services/${svc}/schema`,
        { schema: { type: 'object' }, enforcement: 'enforce' },
      ],
      ['GET', '/api/v1/services/{id}/schema', `/api/v1/services/${svc}/schema`],
      ['GET', '/api/v1/services/{id}/schema/versions', `/api/v1/services/${svc}/schema/versions`],
      // Another organisation's organization-only service is not in the caller's Directory.
      ['GET', '/api/v1/directory/{id}/schema', `/api/v1/directory/${orgOnlyServiceId}/schema`],
      [
        'POST',
        '/api/v1/subscriptions',
        '/api/v1/subscriptions',
        { serviceId: orgOnlyServiceId, deliversTo: 'initech/tps' },
      ],
      [
        'POST',
        '/api/v1/subscriptions',
        '/api/v1/subscriptions',
        { serviceId: svc, deliversTo: 'globex/app' },
      ],
      ['GET', '/api/v1/subscriptions/{id}', `/api/v1/subscriptions/${sub}`],
      ['POST', '/api/v1/subscriptions/{id}/approve', `/api/v1/subscriptions/${sub}/approve`],
      ['POST', '/api/v1/subscriptions/{id}/deny', `/api/v1/subscriptions/${sub}/deny`],
      ['POST', '/api/v1/subscriptions/{id}/revoke', `/api/v1/subscriptions/${sub}/revoke`],
      ['PATCH', '/api/v1/subscriptions/{id}', `/api/v1/subscriptions/${sub}`, { durable: false }],
      ['GET', '/api/v1/usage', '/api/v1/usage?account=acme'],
      ['GET', '/api/v1/blocked', '/api/v1/blocked?account=acme'],
      ['GET', '/api/v1/deliveries/{deliveryId}', `/api/v1/deliveries/${deliveryId}`],
      ['GET', '/api/v1/deliveries/{deliveryId}/payload', `/api/v1/deliveries/${deliveryId}/payload`],
      ['GET', '/api/v1/connections/{id}/history', `/api/v1/connections/${sub}/history`],
      ['POST', '/api/replay/{deliveryId}', `/api/replay/${deliveryId}`],
      ['GET', '/api/connections/{id}/diagnostics', `/api/connections/${sub}/diagnostics`],
      ['GET', '/api/v1/alerts', '/api/v1/alerts?account=globex'],
      [
        'GET',
        '/api/v1/connections/{id}/recoveries/preview',
        `/api/v1/connections/${sub}/recoveries/preview?since=${new Date(Date.now() - 60_000).toISOString()}`,
      ],
      [
        'POST',
        '/api/v1/connections/{id}/recoveries',
        `/api/v1/connections/${sub}/recoveries`,
        { since: new Date(Date.now() - 60_000).toISOString() },
      ],
      ['GET', '/api/v1/connections/{id}/recoveries', `/api/v1/connections/${sub}/recoveries`],
      [
        'GET',
        '/api/v1/connections/{id}/recoveries/{recoveryId}',
        `/api/v1/connections/${sub}/recoveries/rec_0`,
      ],
      [
        'POST',
        '/api/v1/connections/{id}/recoveries/{recoveryId}/cancel',
        `/api/v1/connections/${sub}/recoveries/rec_0/cancel`,
      ],
    ];
    for (const [method, , path, body] of attempts) {
      const response = await h.call(method, path, {
        token: malloryToken,
        ...(body === undefined ? {} : { body }),
      });
      expect({ method, path, status: response.status, type: response.contentType.split(';')[0] }).toEqual({
        method,
        path,
        status: 404,
        type: 'application/problem+json',
      });
    }
    // Lists never leak another account's objects.
    const lists: Array<[string, string, (body: Record<string, unknown>) => unknown]> = [
      ['/api/v1/me', '/api/v1/me', (b) => (b.accounts as Array<{ login: string }>).map((a) => a.login)],
      ['/api/v1/services', '/api/v1/services', (b) => b.services],
      ['/api/v1/subscriptions', '/api/v1/subscriptions', (b) => b.subscriptions],
      [
        '/api/v1/usage',
        '/api/v1/usage',
        (b) => (b.usage as Array<{ account: string }>).map((u) => u.account),
      ],
      [
        '/api/v1/directory',
        '/api/v1/directory',
        (b) => (b.services as Array<{ slug: string }>).map((s) => s.slug),
      ],
      ['/api/v1/deliveries', '/api/v1/deliveries', (b) => b.deliveries],
      ['/api/v1/connections', '/api/v1/connections', (b) => b.connections],
      [
        '/api/v1/audit',
        '/api/v1/audit',
        (b) =>
          (b.entries as Array<{ account: string; action: string }>).map((e) => `${e.account} ${e.action}`),
      ],
      ['/api/v1/alerts', '/api/v1/alerts', (b) => b.alerts],
      ['/api/v1/schema-violations', '/api/v1/schema-violations', (b) => b.violations],
    ];
    const seen: Record<string, unknown> = {};
    for (const [template, path, pick] of lists) {
      const response = await h.call('GET', path, { token: malloryToken });
      expect(response.status).toBe(200);
      seen[template] = pick(response.body);
    }
    expect(seen).toEqual({
      '/api/v1/me': ['initech'],
      '/api/v1/services': [],
      '/api/v1/subscriptions': [],
      '/api/v1/usage': ['initech'],
      '/api/v1/directory': ['acme-deploys'],
      '/api/v1/deliveries': [],
      '/api/v1/connections': [],
      '/api/v1/audit': ['initech token.create'],
      '/api/v1/alerts': [],
      '/api/v1/schema-violations': [],
    });
    // The consumer cannot act as the provider, nor the provider as the consumer.
    expect(
      (await h.call('POST', `/api/v1/subscriptions/${sub}/deny`, { token: world.consumerToken })).status,
    ).toBe(404);
    expect(
      (
        await h.call('PATCH', `/api/v1/services/${svc}`, {
          token: world.consumerToken,
          body: { published: false },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await h.call('PATCH', `/api/v1/subscriptions/${sub}`, {
          token: world.providerToken,
          body: { durable: false },
        })
      ).status,
    ).toBe(404);
    expect(await snapshot()).toEqual(before);

    // API tokens and the service checks act for the caller alone: another's token is not found,
    // a token created is the caller's, the checks name the caller's installation only.
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const alices = await h.call('POST', '/api/v1/tokens', {
      token: world.providerToken,
      body: { name: 'alice only', expiresAt },
    });
    const revoke = await h.call('DELETE', `/api/v1/tokens/${alices.body.id}`, { token: malloryToken });
    expect({ status: revoke.status, type: revoke.contentType.split(';')[0] }).toEqual({
      status: 404,
      type: 'application/problem+json',
    });
    const mine = await h.call('POST', '/api/v1/tokens', {
      token: malloryToken,
      body: { name: 'm', expiresAt },
    });
    expect(mine.status).toBe(201);
    const tokens = await h.call('GET', '/api/v1/tokens', { token: malloryToken });
    expect(tokens.body.tokens.map((t: { id: string }) => t.id)).toContain(mine.body.id);
    expect(tokens.body.tokens.map((t: { id: string }) => t.id)).not.toContain(alices.body.id);
    expect((await h.call('GET', '/api/v1/me', { token: alices.body.token })).status).toBe(200);
    const checks = await h.call('GET', '/api/v1/checks', { token: malloryToken });
    expect(checks.body.checks.find((c: { id: string }) => c.id === 'installations').summary).toBe(
      '1 installation: initech',
    );
    // The App the deployment uses is the same for every caller, and holds no secret.
    const app = await h.call('GET', '/api/v1/app', { token: malloryToken });
    expect(app.status).toBe(200);
    expect(JSON.stringify(app.body)).not.toMatch(/PRIVATE KEY|secret/i);
    const callerOnly = [
      'GET /api/v1/app',
      'POST /api/v1/tokens',
      'GET /api/v1/tokens',
      'DELETE /api/v1/tokens/{tokenId}',
      'GET /api/v1/checks',
    ];

    // Every management route of the OpenAPI document is covered above.
    const openapi = await h.call('GET', '/api/openapi.json');
    const documented = Object.entries(openapi.body.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => /^\/api\/(v1|replay|connections)\//.test(path))
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    const covered = new Set([
      ...attempts.map(([m, t]) => `${m} ${t}`),
      ...lists.map(([t]) => `GET ${t}`),
      ...callerOnly,
    ]);
    expect(documented.filter((route) => !covered.has(route))).toEqual([]);
  });
});

describe('placing hooks on github.com', () => {
  it('explains that GitHub refuses hook URLs it cannot reach', async () => {
    const h = await startHarness({ transport: 'inject', sim: { allowPrivateHookUrls: false } });
    try {
      await h.sim.createInstallation({
        account: { login: 'acme', type: 'Organization' },
        repositories: ['api'],
        sender: { login: 'alice' },
      });
      const token = await h.tokenFor('alice');
      const response = await h.call('PUT', '/api/v1/repositories/acme/api/provider', {
        token,
        body: { enabled: true },
      });
      expect(response.status).toBe(502);
      expect(response.body.code).toBe('github_rejected');
      expect(response.body.detail).toContain("isn't reachable over the public Internet");
      expect(response.body.detail).toContain('ZEKT_BASE_URL');
      const repository = await h.zekt.store.db
        .selectFrom('repositories')
        .selectAll()
        .where('full_name', '=', 'acme/api')
        .executeTakeFirstOrThrow();
      expect(Boolean(repository.provider_enabled)).toBe(false);
      expect(await h.zekt.store.db.selectFrom('repository_hooks').selectAll().execute()).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
