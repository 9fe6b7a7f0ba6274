import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { createManualClock } from '../src/domain/clock.js';
import { HOUR_MS, MINUTE_MS } from '../src/domain/duration.js';
import { resolveAppCredentials } from '../src/setup/app-credentials.js';
import { createZekt } from '../src/zekt.js';
import { type Harness, startHarness } from './support/harness.js';
import { OAuthBrowser } from './support/oauth-browser.js';
import { confirmOnGitHub, registerAppThroughSetup, SetupBrowser } from './support/setup-flow.js';

/**
 * Setup mode: `zekt serve` without the GitHub App's settings starts anyway, prints a
 * setup URL, and the browser that opens it registers the App from a manifest on GitHub (here the
 * simulator). Every bad input is refused without converting anything or changing the App.
 */
let h: Harness;
afterEach(async () => {
  await h?.close();
});

const PROBLEM = 'application/problem+json';

/** The calls Zekt made to GitHub's conversion endpoint. */
function conversions() {
  return h.sim.journal().filter((entry) => /\/app-manifests\/[^/]+\/conversions$/.test(entry.path));
}

async function setupUrl(): Promise<string> {
  const url = await h.zekt.setup.setupUrl();
  if (url === null) throw new Error('the service is not in setup mode');
  return url;
}

/** A browser holding a setup session, with a registration started and confirmed on GitHub. */
async function confirmedRegistration(name = 'Zekt test') {
  const browser = new SetupBrowser(h.url);
  expect((await browser.openSetupUrl(await setupUrl())).status).toBe(303);
  const started = await browser.startedRegistration({ account: 'user', name, public: true });
  const back = await confirmOnGitHub({ ...started, simUrl: h.sim.url, login: 'alice' });
  return { browser, back, started };
}

/** A problem answer: its status, problem+json, and its code. */
async function expectProblem(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toContain(PROBLEM);
  expect(((await response.json()) as { code: string }).code).toBe(code);
}

async function expectSetupMode(): Promise<void> {
  expect((await h.call('GET', '/readyz')).body.code).toBe('setup_required');
  expect(await resolveAppCredentials({ store: h.zekt.store, config: h.config })).toBeNull();
}

describe('setup mode', () => {
  it('starts without App settings: /readyz and webhooks answer 503 setup_required, the API answers', async () => {
    h = await startHarness({ withoutApp: true });
    const ready = await h.call('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.contentType).toContain(PROBLEM);
    expect(ready.body.code).toBe('setup_required');
    expect(ready.body.detail).toContain('/setup');

    const signed: Record<string, string> = { 'x-github-event': 'ping', 'x-hub-signature-256': 'sha256=00' };
    for (const headers of [signed, { 'x-github-event': 'ping' }]) {
      const webhook = await h.call('POST', '/webhooks/github', { headers, body: { zen: 'hi' } });
      expect(webhook.status).toBe(503);
      expect(webhook.contentType).toContain(PROBLEM);
      expect(webhook.body.code).toBe('setup_required');
    }
    expect((await h.call('GET', '/auth/login')).body.code).toBe('oauth_not_configured');
    expect((await h.call('GET', '/api/openapi.json')).status).toBe(200);
    const status = await h.call('GET', '/api/setup');
    expect(status.body).toEqual({
      configured: false,
      source: null,
      setupSession: false,
      app: null,
      installed: false,
      githubUrl: h.sim.url,
      defaultName: expect.stringMatching(/^Zekt 127\.0\.0\.1:\d+$/),
    });
    const page = await fetch(`${h.url}/setup`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
  });

  it('has one setup URL: the same every time, from every process on the store with the same ZEKT_SECRET', async () => {
    h = await startHarness({ withoutApp: true });
    const url = await setupUrl();
    expect(url).toMatch(new RegExp(`^${h.url}/setup\\?code=[A-Za-z0-9_-]{43}$`));
    expect(await setupUrl()).toBe(url);
    const logger = pino({ level: 'silent' });
    const other = await createZekt({ config: h.config, store: h.zekt.store, role: 'api', logger });
    const otherSecret = await createZekt({
      config: { ...h.config, secret: 'b'.repeat(64) },
      store: h.zekt.store,
      role: 'api',
      logger,
    });
    try {
      expect(await other.setup.setupUrl()).toBe(url);
      // Another ZEKT_SECRET derives another code, which this server refuses.
      const foreign = (await otherSecret.setup.setupUrl()) ?? '';
      expect(foreign).not.toBe(url);
      const refused = await fetch(foreign.replace(/^http:\/\/[^/]+/, h.url), { redirect: 'manual' });
      expect(refused.status).toBe(403);
    } finally {
      await other.stop();
      await otherSecret.stop();
    }
  });

  it('refuses registering without the setup code, or with a wrong one', async () => {
    h = await startHarness({ withoutApp: true });
    const browser = new SetupBrowser(h.url);
    const noSession = await browser.startRegistration();
    await expectProblem(noSession, 403, 'setup_session_required');

    for (const code of ['wrong', '', (await setupUrl()).split('code=')[1]!.replace(/.$/, 'x')]) {
      const refused = await browser.get(`/setup?code=${code}`);
      await expectProblem(refused, 403, 'invalid_setup_code');
      expect(refused.headers.getSetCookie()).toEqual([]);
    }
    const page = await browser.get('/setup?code=wrong', { accept: 'text/html' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/setup?problem=invalid_setup_code');

    // A cookie of the right shape that no setup code ever opened.
    browser.cookies.set('zekt_setup', `zss_${'A'.repeat(43)}`);
    expect((await browser.startRegistration()).status).toBe(403);
    const sessions = await h.zekt.store.db.selectFrom('setup_sessions').selectAll().execute();
    expect(sessions).toEqual([]);
    expect((await browser.get('/setup/callback?code=abc&state=def')).status).toBe(403);
    expect(conversions()).toEqual([]);
    await expectSetupMode();
  });

  it('gives the setup URL’s browser a session, and it the manifest GitHub registers the App from', async () => {
    h = await startHarness({ withoutApp: true });
    const browser = new SetupBrowser(h.url);
    const opened = await browser.openSetupUrl(await setupUrl());
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/setup');
    expect(opened.headers.getSetCookie()).toEqual([
      expect.stringMatching(
        /^zekt_setup=zss_[A-Za-z0-9_-]{43}; Max-Age=7200; Path=\/; HttpOnly; SameSite=Lax$/,
      ),
    ]);
    expect((await (await browser.get('/api/setup')).json()) as object).toEqual(
      expect.objectContaining({ configured: false, setupSession: true }),
    );

    const personal = await browser.startedRegistration({ account: 'user', name: 'Zekt prod', public: false });
    const action = new URL(personal.action);
    expect(`${action.origin}${action.pathname}`).toBe(`${h.sim.url}/settings/apps/new`);
    // 256 random bits, base64url.
    expect(action.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.parse(personal.manifest)).toEqual({
      name: 'Zekt prod',
      url: `${h.url}/`,
      description: expect.stringContaining(h.url),
      hook_attributes: { url: `${h.url}/webhooks/github`, active: true },
      redirect_url: `${h.url}/setup/callback`,
      callback_urls: [`${h.url}/auth/callback`],
      setup_url: `${h.url}/setup`,
      setup_on_update: false,
      request_oauth_on_install: false,
      public: false,
      default_permissions: {
        contents: 'write',
        metadata: 'read',
        actions: 'write',
        repository_hooks: 'write',
      },
      default_events: [],
    });
    const organisation = await browser.startedRegistration({
      account: 'organization',
      organization: 'acme',
      name: 'Zekt prod',
      public: true,
    });
    expect(organisation.action).toMatch(
      new RegExp(`^${h.sim.url}/organizations/acme/settings/apps/new\\?state=[A-Za-z0-9_-]{43}$`),
    );
    expect(new URL(organisation.action).searchParams.get('state')).not.toBe(action.searchParams.get('state'));

    for (const body of [
      { account: 'organization', name: 'Zekt', public: true },
      { account: 'organization', organization: '-acme', name: 'Zekt', public: true },
      { account: 'user', name: 'x'.repeat(35), public: true },
      { account: 'user', name: '***', public: true },
      { account: 'user', name: 'Zekt', public: 'yes' },
      { account: 'team', name: 'Zekt', public: true },
    ]) {
      const refused = await browser.startRegistration(body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(((await refused.json()) as { code: string }).code).toBe('invalid_request');
    }
    const crossSite = await browser.request(
      'POST',
      '/api/setup/manifest',
      { origin: 'https://evil.example' },
      { account: 'user', name: 'Zekt', public: true },
    );
    await expectProblem(crossSite, 403, 'csrf_rejected');
  });

  it('registers the App through setup: sealed in the store, in use at once, the setup code spent', async () => {
    h = await startHarness({ withoutApp: true });
    const printed = await setupUrl();
    const browser = await registerAppThroughSetup({
      zektUrl: h.url,
      simUrl: h.sim.url,
      setupUrl: printed,
      login: 'alice',
      name: 'Zekt test',
    });
    expect(conversions()).toHaveLength(1);
    const registered = h.sim.apps().find((app) => app.slug === 'zekt-test')!;
    expect(registered).toEqual(
      expect.objectContaining({
        owner: 'alice',
        webhookUrl: `${h.url}/webhooks/github`,
        callbackUrls: [`${h.url}/auth/callback`],
        setupUrl: `${h.url}/setup`,
        public: true,
      }),
    );

    const theApp = {
      appId: registered.id,
      slug: 'zekt-test',
      name: 'Zekt test',
      owner: 'alice',
      htmlUrl: `${h.sim.url}/apps/zekt-test`,
      installUrl: `${h.sim.url}/apps/zekt-test/installations/new`,
    };
    // Out of setup mode, without a restart.
    expect((await h.call('GET', '/readyz')).status).toBe(200);
    const status = (await (await browser.get('/api/setup')).json()) as Record<string, unknown>;
    expect(status).toEqual(
      expect.objectContaining({
        configured: true,
        source: 'store',
        setupSession: true,
        installed: false,
        app: theApp,
      }),
    );
    // Strangers learn that Zekt is set up, not which App it is.
    expect((await h.call('GET', '/api/setup')).body).toEqual(
      expect.objectContaining({ configured: true, source: 'store', setupSession: false, app: null }),
    );

    // Sealed: no secret of the App is readable in the store.
    const [row] = await h.zekt.store.db.selectFrom('app_credentials').selectAll().execute();
    for (const secret of [
      registered.privateKeyPem.split('\n')[1]!,
      registered.webhookSecret,
      registered.clientSecret,
    ]) {
      expect(row!.sealed).not.toContain(secret);
    }
    expect(row!.sealed).not.toContain('zekt-test');
    expect(await resolveAppCredentials({ store: h.zekt.store, config: h.config })).toEqual(
      expect.objectContaining({
        source: 'store',
        appId: registered.id,
        privateKey: registered.privateKeyPem,
        webhookSecret: registered.webhookSecret,
        clientId: registered.clientId,
        clientSecret: registered.clientSecret,
      }),
    );

    // The App's webhooks (signed with its own secret), its OAuth client and its installation tokens.
    const installed = await h.sim.createInstallation({
      account: { login: 'alice' },
      repositories: ['api'],
      app: 'zekt-test',
    });
    expect(installed.delivery?.status).toBe(200);
    expect(((await (await browser.get('/api/setup')).json()) as { installed: boolean }).installed).toBe(true);
    const login = new OAuthBrowser(h.url);
    const loggedIn = await login.logIn('alice');
    expect(loggedIn.status).toBe(302);
    const me = (await (await login.get('/api/v1/me')).json()) as { accounts: Array<{ login: string }> };
    expect(me.accounts.map((a) => a.login)).toEqual(['alice']);
    const token = await h.tokenFor('alice');
    const provider = await h.call('PUT', '/api/v1/repositories/alice/api/provider', {
      token,
      body: { enabled: true },
    });
    expect(provider.status, JSON.stringify(provider.body)).toBe(200);
    const app = await h.call('GET', '/api/v1/app', { token });
    expect(app.body).toEqual({ source: 'store', ...theApp, registeredAt: expect.any(String) });

    // Setup is closed: the printed code opens nothing any more.
    expect(await h.zekt.setup.setupUrl()).toBeNull();
    const reopened = await new SetupBrowser(h.url).openSetupUrl(printed);
    await expectProblem(reopened, 409, 'app_already_configured');
    expect(await h.zekt.store.db.selectFrom('setup_codes').selectAll().execute()).toEqual([]);
  });

  it('refuses a callback without a state: nothing converted, the App unchanged', async () => {
    h = await startHarness({ withoutApp: true });
    const { browser, back } = await confirmedRegistration();
    for (const query of [
      `code=${back.searchParams.get('code')}`,
      `code=${back.searchParams.get('code')}&state=`,
    ]) {
      const refused = await browser.get(`/setup/callback?${query}`);
      await expectProblem(refused, 400, 'invalid_setup_state');
    }
    const page = await browser.get(`/setup/callback?code=${back.searchParams.get('code')}`, {
      accept: 'text/html',
    });
    expect(page.headers.get('location')).toBe('/setup?problem=invalid_setup_state');
    expect(conversions()).toEqual([]);
    await expectSetupMode();
    // The code was never spent: the callback GitHub really sent still registers the App.
    expect((await browser.get(back.toString())).status).toBe(303);
  });

  it('refuses a state used once already: nothing converted again', async () => {
    h = await startHarness({ withoutApp: true });
    const { browser, back } = await confirmedRegistration();
    const tampered = new URL(back);
    tampered.searchParams.set('code', '0123456789abcdef0123456789abcdef01234567');
    // GitHub does not know that code: the state is spent on the failed attempt.
    const failed = await browser.get(tampered.toString());
    await expectProblem(failed, 502, 'manifest_code_rejected');
    const replayed = await browser.get(back.toString());
    await expectProblem(replayed, 400, 'invalid_setup_state');
    expect(conversions().map((entry) => entry.path)).toEqual([
      '/api/v3/app-manifests/0123456789abcdef0123456789abcdef01234567/conversions',
    ]);
    await expectSetupMode();
  });

  it('refuses a state older than an hour: nothing converted', async () => {
    const clock = createManualClock(Date.now());
    h = await startHarness({ withoutApp: true, clock, workers: false });
    const browser = new SetupBrowser(h.url);
    expect((await browser.openSetupUrl(await setupUrl())).status).toBe(303);
    const started = await browser.startedRegistration();
    clock.advance(HOUR_MS + MINUTE_MS);
    const back = await confirmOnGitHub({ ...started, simUrl: h.sim.url, login: 'alice' });
    const refused = await browser.get(back.toString());
    await expectProblem(refused, 400, 'invalid_setup_state');
    expect(conversions()).toEqual([]);
    await expectSetupMode();
  });

  it('refuses a state another browser was given, and one from a browser without a setup session', async () => {
    h = await startHarness({ withoutApp: true });
    const { back } = await confirmedRegistration();
    const other = new SetupBrowser(h.url);
    expect((await other.openSetupUrl(await setupUrl())).status).toBe(303);
    const foreign = await other.get(back.toString());
    await expectProblem(foreign, 400, 'invalid_setup_state');
    const anonymous = await fetch(back, { redirect: 'manual' });
    await expectProblem(anonymous, 403, 'setup_session_required');
    expect(conversions()).toEqual([]);
    await expectSetupMode();
  });

  it('explains a conversion GitHub refuses (422, 404) or cannot answer, and registers when tried again', async () => {
    h = await startHarness({ withoutApp: true });
    h.sim.injectFaults({
      method: 'POST',
      path: '/app-manifests/*/conversions',
      faults: [
        { kind: 'status', status: 422, body: { message: 'Validation Failed', errors: ['code expired'] } },
      ],
    });
    const first = await confirmedRegistration('Zekt one');
    const page = await first.browser.get(first.back.toString(), { accept: 'text/html' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/setup?problem=manifest_code_rejected');
    await expectSetupMode();

    // The same code again (a new state): GitHub has not used it up, so it converts now.
    const again = await first.browser.startedRegistration({
      account: 'user',
      name: 'Zekt one',
      public: true,
    });
    const retried = new URL(first.back);
    retried.searchParams.set('state', new URL(again.action).searchParams.get('state')!);
    await h.sim.suspend();
    const down = await first.browser.get(retried.toString());
    await h.sim.resume();
    await expectProblem(down, 502, 'github_unavailable');

    const second = await first.browser.startedRegistration({
      account: 'user',
      name: 'Zekt two',
      public: true,
    });
    const back = await confirmOnGitHub({ ...second, simUrl: h.sim.url, login: 'alice' });
    const unknown = new URL(back);
    unknown.searchParams.set('code', 'ffffffffffffffffffffffffffffffffffffffff');
    const notFound = await first.browser.get(unknown.toString());
    expect(notFound.status).toBe(502);
    const problem = (await notFound.json()) as { code: string; detail: string };
    expect(problem.code).toBe('manifest_code_rejected');
    expect(problem.detail).toContain('404');
    await expectSetupMode();

    const third = await first.browser.startedRegistration({
      account: 'user',
      name: 'Zekt three',
      public: true,
    });
    const ok = await confirmOnGitHub({ ...third, simUrl: h.sim.url, login: 'alice' });
    expect((await first.browser.get(ok.toString())).status).toBe(303);
    expect((await h.call('GET', '/readyz')).status).toBe(200);
  });

  it('refuses every step of setup when the App is configured in the environment', async () => {
    h = await startHarness();
    expect(await h.zekt.setup.setupUrl()).toBeNull();
    const browser = new SetupBrowser(h.url);
    browser.cookies.set('zekt_setup', `zss_${'A'.repeat(43)}`);
    for (const response of [
      await browser.get('/setup?code=anything'),
      await browser.startRegistration(),
      await browser.get('/setup/callback?code=abc&state=def'),
    ]) {
      await expectProblem(response, 409, 'app_already_configured');
    }
    expect((await h.call('GET', '/api/setup')).body).toEqual(
      expect.objectContaining({ configured: true, source: 'environment', app: null }),
    );
    const token = await h.tokenFor('alice');
    expect((await h.call('GET', '/api/v1/app', { token })).body).toEqual(
      expect.objectContaining({ source: 'environment', appId: h.sim.app.id, slug: null, registeredAt: null }),
    );
    expect(await h.zekt.store.db.selectFrom('setup_codes').selectAll().execute()).toEqual([]);
  });

  it('refuses setup once an App was registered, and lets the environment’s App win over it', async () => {
    h = await startHarness({ withoutApp: true });
    const { browser, back } = await confirmedRegistration();
    const spare = await browser.startedRegistration();
    expect((await browser.get(back.toString())).status).toBe(303);
    // The browser that registered still holds its session: every step is closed to it too.
    expect((await browser.startRegistration()).status).toBe(409);
    const late = await confirmOnGitHub({ ...spare, simUrl: h.sim.url, login: 'alice', name: 'Zekt late' });
    const refused = await browser.get(late.toString());
    expect(refused.status).toBe(409);
    expect(conversions()).toHaveLength(1);
    const registered = await resolveAppCredentials({ store: h.zekt.store, config: h.config });
    expect(registered?.slug).toBe('zekt-test');

    // The simulator's own App in the environment: it is the one used, the stored one stays.
    const withEnvironmentApp = loadConfig({
      NODE_ENV: 'test',
      ZEKT_SECRET: h.config.secret,
      GITHUB_API_URL: h.sim.apiUrl,
      GITHUB_APP_ID: String(h.sim.app.id),
      GITHUB_PRIVATE_KEY: h.sim.app.privateKeyPem,
      GITHUB_WEBHOOK_SECRET: h.sim.app.webhookSecret,
    });
    const resolved = await resolveAppCredentials({ store: h.zekt.store, config: withEnvironmentApp });
    expect(resolved).toEqual(expect.objectContaining({ source: 'environment', appId: h.sim.app.id }));
  });

  it('refuses to start when ZEKT_SECRET cannot open the App registered through setup', async () => {
    h = await startHarness({ withoutApp: true });
    await registerAppThroughSetup({
      zektUrl: h.url,
      simUrl: h.sim.url,
      setupUrl: await setupUrl(),
      login: 'alice',
    });
    const started = createZekt({
      config: { ...h.config, secret: 'c'.repeat(64) },
      store: h.zekt.store,
      role: 'api',
      logger: pino({ level: 'silent' }),
    });
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(/ZEKT_SECRET/);
  });
});
