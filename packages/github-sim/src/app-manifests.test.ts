import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { api, appJwt, manualClock, signAppJwt } from '../test/support/github-client.js';
import { type Receiver, startReceiver } from '../test/support/http-receiver.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import type { GitHubSimulator } from './index.js';

/**
 * GitHub's App manifest flow, GitHub's side: the pages a browser posts a manifest to, the redirect
 * with a one-time code, and the conversion that trades the code for the App's credentials. The App
 * registered this way then works like the one the simulator starts with.
 */
let sim: GitHubSimulator;
let receiver: Receiver | undefined;
afterEach(async () => {
  await sim?.close();
  await receiver?.close();
  receiver = undefined;
});

const REDIRECT = 'http://127.0.0.1:9/setup/callback';

function manifest(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Zekt test',
    url: 'http://127.0.0.1:9/',
    hook_attributes: { url: 'http://127.0.0.1:9/webhooks/github' },
    redirect_url: REDIRECT,
    callback_urls: ['http://127.0.0.1:9/auth/callback'],
    setup_url: 'http://127.0.0.1:9/setup',
    public: true,
    default_permissions: { contents: 'write', metadata: 'read', actions: 'write', repository_hooks: 'write' },
    default_events: [],
    ...overrides,
  };
}

/** Posts the form a browser would post, without following redirects. */
function post(path: string, fields: Record<string, string>) {
  return fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

/** The whole browser side for a signed-in user: review, confirm, and the code GitHub redirects with. */
async function register(
  path: string,
  body: Record<string, unknown>,
  state = 'st4te',
): Promise<{ code: string; location: URL }> {
  const fields = { manifest: JSON.stringify(body) };
  const review = await post(`${path}?state=${state}`, fields);
  expect(review.status).toBe(200);
  expect(await review.text()).toContain('Create GitHub App');
  const created = await post(`${path}?state=${state}`, {
    ...fields,
    confirm: 'create',
    name: String(body.name),
  });
  expect(created.status).toBe(302);
  const location = new URL(created.headers.get('location') ?? '');
  return { code: location.searchParams.get('code') ?? '', location };
}

function convert(code: string) {
  return api(sim, 'POST', `/app-manifests/${code}/conversions`);
}

// biome-ignore lint/suspicious/noExplicitAny: the test reads the conversion field by field.
type Converted = Record<string, any>;

describe('registering a GitHub App from a manifest', () => {
  it('asks who is signing in, shows the manifest, and sends the browser back with a code and the state', async () => {
    sim = await createTestSimulator();
    const fields = { manifest: JSON.stringify(manifest()) };
    const anonymous = await post('/settings/apps/new?state=abc', fields);
    expect(anonymous.status).toBe(200);
    expect(await anonymous.text()).toContain('Sign in to GitHub to register a GitHub App');

    const signedIn = await post('/settings/apps/new?state=abc', { ...fields, login: 'alice' });
    const review = await signedIn.text();
    expect(review).toContain('Create GitHub App for alice');
    expect(review).toContain('http://127.0.0.1:9/webhooks/github');
    expect(review).toContain('repository_hooks: write');
    expect(review).toContain('value="Zekt test"');

    const created = await post('/settings/apps/new?state=abc', {
      ...fields,
      confirm: 'create',
      name: 'Zekt test',
    });
    expect(created.status).toBe(302);
    const location = new URL(created.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('abc');
    expect(location.searchParams.get('code')).toMatch(/^[0-9a-f]{40}$/);
  });

  it('trades the code once for the App, its key, webhook secret and OAuth client', async () => {
    sim = await createTestSimulator();
    sim.signIn('alice');
    const { code } = await register('/settings/apps/new', manifest());
    const converted = await convert(code);
    expect(converted.status).toBe(201);
    const app = converted.body as Converted;
    expect(app).toEqual(
      expect.objectContaining({
        slug: 'zekt-test',
        name: 'Zekt test',
        owner: expect.objectContaining({ login: 'alice', type: 'User' }),
        external_url: 'http://127.0.0.1:9/',
        html_url: `${sim.url}/apps/zekt-test`,
        permissions: { contents: 'write', metadata: 'read', actions: 'write', repository_hooks: 'write' },
        events: [],
        client_id: expect.stringMatching(/^Iv23li/),
        client_secret: expect.stringMatching(/^[0-9a-f]{40}$/),
        webhook_secret: expect.any(String),
        pem: expect.stringContaining('-----BEGIN RSA PRIVATE KEY-----'),
      }),
    );
    expect(app.id).not.toBe(sim.app.id);
    expect(sim.apps().map((a) => a.slug)).toEqual([sim.app.slug, 'zekt-test']);

    const again = await convert(code);
    expect(again.status).toBe(404);
    expect((await convert('0123456789abcdef0123')).status).toBe(404);
  });

  it('lets a code expire after an hour', async () => {
    const clock = manualClock();
    sim = await createTestSimulator({ clock });
    sim.signIn('alice');
    const { code } = await register('/settings/apps/new', manifest());
    clock.advanceSeconds(3601);
    expect((await convert(code)).status).toBe(404);
  });

  it('registers an App of an organisation for its members only', async () => {
    sim = await createTestSimulator();
    sim.signIn('alice');
    const { code } = await register('/organizations/acme/settings/apps/new', manifest({ name: 'Acme Zekt' }));
    const app = (await convert(code)).body as Converted;
    expect(app.owner).toEqual(expect.objectContaining({ login: 'acme', type: 'Organization' }));

    sim.signIn('mallory');
    const foreign = await post('/organizations/acme/settings/apps/new', {
      manifest: JSON.stringify(manifest({ name: 'Not yours' })),
    });
    expect(foreign.status).toBe(404);
  });

  it('refuses a taken or too long name, and a manifest GitHub would refuse', async () => {
    sim = await createTestSimulator();
    sim.signIn('alice');
    const fields = (name: string) => ({ manifest: JSON.stringify(manifest()), confirm: 'create', name });
    const taken = await post('/settings/apps/new', fields(sim.app.name));
    expect(taken.status).toBe(422);
    expect(await taken.text()).toContain('Name is already in use.');
    const long = await post('/settings/apps/new', fields('x'.repeat(35)));
    expect(long.status).toBe(422);
    expect(await long.text()).toContain('Name is too long (maximum is 34 characters).');

    for (const bad of [
      'not json',
      JSON.stringify({ name: 'no url' }),
      JSON.stringify(manifest({ hook_attributes: {} })),
      JSON.stringify(manifest({ default_permissions: { contents: 'admin' } })),
      JSON.stringify(manifest({ redirect_url: 'javascript:alert(1)' })),
    ]) {
      const refused = await post('/settings/apps/new', { manifest: bad });
      expect(refused.status, bad).toBe(400);
      expect(await refused.text()).toContain('Invalid GitHub App manifest');
    }
    expect(sim.apps()).toHaveLength(1);
  });

  it('escapes the manifest and the state it shows', async () => {
    sim = await createTestSimulator();
    sim.signIn('alice');
    const hostile = await post('/settings/apps/new?state=%22%3E%3Cscript%3E', {
      manifest: JSON.stringify(manifest({ name: '<script>alert(1)</script>' })),
    });
    const text = await hostile.text();
    expect(text).not.toContain('<script>');
    expect(text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});

describe('an App registered from a manifest', () => {
  it('signs its own JWTs, gets its own installations, tokens and webhooks, and leaves the first App alone', async () => {
    sim = await createTestSimulator({ allowPrivateHookUrls: true });
    receiver = await startReceiver();
    sim.signIn('alice');
    const { code } = await register(
      '/settings/apps/new',
      manifest({
        hook_attributes: { url: `${receiver.url}/webhooks/github` },
        setup_url: `${receiver.url}/setup`,
      }),
    );
    const app = (await convert(code)).body as Converted;
    const now = Math.floor(Date.now() / 1000);
    const jwt = await signAppJwt(app.pem, { iss: app.id, iat: now - 30, exp: now + 570 });
    const byClientId = await signAppJwt(app.pem, { iss: app.client_id, iat: now - 30, exp: now + 570 });
    for (const token of [jwt, byClientId]) {
      const own = await api(sim, 'GET', '/app', { authorization: `Bearer ${token}` });
      expect(own.status).toBe(200);
      expect(own.body).toEqual(expect.objectContaining({ id: app.id, slug: 'zekt-test' }));
    }
    // The key of one App does not sign for the other.
    const forged = await signAppJwt(app.pem, { iss: sim.app.id, iat: now - 30, exp: now + 570 });
    expect((await api(sim, 'GET', '/app', { authorization: `Bearer ${forged}` })).status).toBe(401);

    // Installing through its page: GitHub sends the browser on to the App's setup URL.
    sim.signIn('bob');
    const installed = await post('/apps/zekt-test/installations/new', { repositories: 'app' });
    expect(installed.status).toBe(302);
    const setup = new URL(installed.headers.get('location') ?? '');
    expect(`${setup.origin}${setup.pathname}`).toBe(`${receiver.url}/setup`);
    expect(setup.searchParams.get('setup_action')).toBe('install');
    const installationId = Number(setup.searchParams.get('installation_id'));

    const hook = await receiver.waitFor((r) => r.headers['x-github-event'] === 'installation');
    const signature = `sha256=${createHmac('sha256', app.webhook_secret).update(hook.rawBody).digest('hex')}`;
    expect(hook.headers['x-hub-signature-256']).toBe(signature);
    expect(hook.headers['x-github-hook-installation-target-id']).toBe(String(app.id));
    expect(hook.json).toEqual(
      expect.objectContaining({
        action: 'created',
        installation: expect.objectContaining({ id: installationId, app_id: app.id, app_slug: 'zekt-test' }),
        sender: expect.objectContaining({ login: 'bob' }),
      }),
    );

    const installations = await api(sim, 'GET', '/app/installations', { authorization: `Bearer ${jwt}` });
    expect((installations.body as Converted[]).map((i) => i.id)).toEqual([installationId]);
    const token = await api(sim, 'POST', `/app/installations/${installationId}/access_tokens`, {
      authorization: `Bearer ${jwt}`,
    });
    expect(token.status).toBe(201);
    expect(token.body).toEqual(
      expect.objectContaining({
        permissions: { contents: 'write', metadata: 'read', actions: 'write', repository_hooks: 'write' },
      }),
    );
    const dispatched = await api(sim, 'POST', '/repos/bob/app/dispatches', {
      authorization: `Bearer ${(token.body as Converted).token}`,
      body: { event_type: 'hello' },
    });
    expect(dispatched.status).toBe(204);

    // The first App sees none of it.
    const first = `Bearer ${await appJwt(sim)}`;
    expect((await api(sim, 'GET', '/app/installations', { authorization: first })).body).toEqual([]);
    expect(
      (await api(sim, 'POST', `/app/installations/${installationId}/access_tokens`, { authorization: first }))
        .status,
    ).toBe(404);
    expect((await api(sim, 'GET', '/app/hook/deliveries', { authorization: first })).body).toEqual([]);
    const own = await api(sim, 'GET', '/app/hook/deliveries', { authorization: `Bearer ${jwt}` });
    expect((own.body as Converted[]).map((d) => d.event)).toEqual(['installation']);
  });

  it('logs users in with its own OAuth client and lists only its installations', async () => {
    sim = await createTestSimulator();
    await sim.createInstallation({ account: { login: 'carol' }, repositories: ['old'] });
    sim.signIn('carol');
    const { code } = await register('/settings/apps/new', manifest());
    const app = (await convert(code)).body as Converted;
    await sim.createInstallation({ account: { login: 'carol' }, repositories: ['new'], app: 'zekt-test' });

    const authorize = new URL(`${sim.url}/login/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: app.client_id,
      redirect_uri: 'http://127.0.0.1:9/auth/callback',
    }).toString();
    const authorized = await fetch(authorize, { redirect: 'manual' });
    expect(authorized.status).toBe(302);
    const oauthCode = new URL(authorized.headers.get('location') ?? '').searchParams.get('code');
    const outside = new URL(authorize);
    outside.searchParams.set('redirect_uri', 'http://127.0.0.1:9/elsewhere');
    expect((await fetch(outside, { redirect: 'manual' })).status).toBe(400);

    const wrongSecret = await fetch(`${sim.url}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: app.client_id,
        client_secret: sim.app.clientSecret,
        code: oauthCode,
      }),
    });
    expect(await wrongSecret.json()).toEqual(
      expect.objectContaining({ error: 'incorrect_client_credentials' }),
    );
    const exchanged = await fetch(`${sim.url}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: app.client_id, client_secret: app.client_secret, code: oauthCode }),
    });
    const { access_token } = (await exchanged.json()) as { access_token: string };
    const listed = await api(sim, 'GET', '/user/installations', { authorization: `Bearer ${access_token}` });
    expect((listed.body as Converted).installations).toEqual([
      expect.objectContaining({ app_id: app.id, account: expect.objectContaining({ login: 'carol' }) }),
    ]);
  });

  it('installs a private App only on its owner’s account', async () => {
    sim = await createTestSimulator();
    sim.signIn('alice');
    await convert((await register('/settings/apps/new', manifest({ public: false }))).code);
    sim.signIn('bob');
    const refused = await post('/apps/zekt-test/installations/new', { repositories: 'app' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('zekt-test is a private App of alice');
    sim.signIn('alice');
    const own = await post('/apps/zekt-test/installations/new', { repositories: 'api' });
    expect(own.status).toBe(302);
  });
});
