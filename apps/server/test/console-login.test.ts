import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './support/harness.js';
import { OAuthBrowser } from './support/oauth-browser.js';

/**
 * The console's "log in with GitHub" against the simulator's OAuth pages, followed the
 * way a browser follows it: redirects by hand, cookies carried from `Set-Cookie`.
 */
let h: Harness;

describe('console login', () => {
  beforeEach(async () => {
    h = await startHarness();
    // acme is installed by alice, globex by bob: each installer is a member of their organisation.
    await h.sim.createInstallation({
      account: { login: 'acme', type: 'Organization' },
      repositories: ['api'],
      sender: { login: 'alice' },
    });
    await h.sim.createInstallation({
      account: { login: 'globex', type: 'Organization' },
      repositories: ['app'],
      sender: { login: 'bob' },
    });
  });
  afterEach(async () => {
    await h.close();
  });

  it('logs in through GitHub, starts a session and refreshes memberships from the installations', async () => {
    const browser = new OAuthBrowser(h.url);
    const start = await browser.get('/auth/login');
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${h.sim.url}/login/oauth/authorize`);
    expect(authorize.searchParams.get('client_id')).toBe(h.sim.app.clientId);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${h.url}/auth/callback`);
    const state = authorize.searchParams.get('state')!;
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stateCookie = start.headers.getSetCookie()[0]!;
    expect(stateCookie).toContain('HttpOnly');
    expect(stateCookie).toContain('SameSite=Lax');

    h.sim.addOrgMember('globex', 'alice');
    authorize.searchParams.set('login', 'alice');
    const github = await browser.get(authorize.toString());
    const callback = await browser.get(github.headers.get('location')!);
    expect(callback.status).toBe(302);
    expect(callback.headers.get('location')).toBe('/');
    const session = callback.headers.getSetCookie().find((c) => c.startsWith('zekt_session='))!;
    expect(session).toMatch(
      /^zekt_session=zks_[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/,
    );
    expect(browser.cookies.has('zekt_oauth')).toBe(false);

    const me = await browser.get('/api/v1/me');
    expect(me.status).toBe(200);
    const body = (await me.json()) as {
      user: { login: string; id: number };
      accounts: Array<{ login: string }>;
    };
    expect(body.user.login).toBe('alice');
    expect(typeof body.user.id).toBe('number');
    expect(body.accounts.map((a) => a.login)).toEqual(['acme', 'globex']);

    // Access lost on GitHub is lost at the next login; the session's user stays the same person.
    h.sim.removeOrgMember('globex', 'alice');
    const again = new OAuthBrowser(h.url);
    expect((await again.logIn('alice')).status).toBe(302);
    const after = (await (await again.get('/api/v1/me')).json()) as { accounts: Array<{ login: string }> };
    expect(after.accounts.map((a) => a.login)).toEqual(['acme']);
    // The API token of the same user sees the same accounts.
    const viaToken = await h.call('GET', '/api/v1/me', { token: await h.tokenFor('alice') });
    expect(viaToken.body.accounts.map((a: { login: string }) => a.login)).toEqual(['acme']);
  });

  it('lands on the console path the login started from, never on another site', async () => {
    expect(
      (await new OAuthBrowser(h.url).logIn('alice', { returnTo: '/connections?x=1' })).headers.get(
        'location',
      ),
    ).toBe('/connections?x=1');
    for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      expect((await new OAuthBrowser(h.url).logIn('alice', { returnTo: evil })).headers.get('location')).toBe(
        '/',
      );
    }
  });

  it('ends the session at logout', async () => {
    const browser = new OAuthBrowser(h.url);
    await browser.logIn('alice');
    const cookie = browser.cookies.get('zekt_session')!;
    const logout = await browser.request('POST', '/auth/logout');
    expect(logout.status).toBe(204);
    expect(logout.headers.getSetCookie()[0]).toContain('Max-Age=0');
    const stale = await fetch(`${h.url}/api/v1/me`, { headers: { cookie: `zekt_session=${cookie}` } });
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { code: string }).code).toBe('session_expired');
  });

  it('accepts changes with the session only from the console’s own origin', async () => {
    const browser = new OAuthBrowser(h.url);
    await browser.logIn('alice');
    const path = '/api/v1/repositories/acme/api/workflows/deploy.yml';
    const forged = await browser.request(
      'PUT',
      path,
      { origin: 'https://evil.example' },
      { whitelisted: true },
    );
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { code: string }).code).toBe('csrf_rejected');
    const bare = await browser.request('PUT', path, {}, { whitelisted: true });
    expect(bare.status).toBe(403);
    const workflows = await h.call('GET', '/api/v1/repositories/acme/api/workflows', {
      token: await h.tokenFor('alice'),
    });
    expect(workflows.body.workflows).toEqual([]);

    expect((await browser.request('PUT', path, { origin: h.url }, { whitelisted: true })).status).toBe(200);
    expect(
      (await browser.request('PUT', path, { 'sec-fetch-site': 'same-origin' }, { whitelisted: true })).status,
    ).toBe(200);
  });

  describe('refuses', () => {
    it('a callback whose state this browser was not given (login CSRF), and a reused state', async () => {
      const victim = new OAuthBrowser(h.url);
      const attacker = new OAuthBrowser(h.url);
      const start = await attacker.get('/auth/login');
      const authorize = new URL(start.headers.get('location')!);
      authorize.searchParams.set('login', 'mallory');
      const github = await attacker.get(authorize.toString());
      // The attacker hands their callback URL to the victim, whose browser holds no matching state.
      const planted = await victim.get(github.headers.get('location')!);
      expect(planted.status).toBe(400);
      expect(((await planted.json()) as { code: string }).code).toBe('invalid_oauth_state');
      expect(victim.cookies.has('zekt_session')).toBe(false);

      // A state cookie works once.
      const callbackUrl = github.headers.get('location')!;
      expect((await attacker.get(callbackUrl)).status).toBe(302);
      attacker.cookies.delete('zekt_session');
      const replayed = await attacker.get(callbackUrl);
      expect(replayed.status).toBe(400);
    });

    it('a code GitHub does not accept, with GitHub’s reason', async () => {
      const browser = new OAuthBrowser(h.url);
      const start = await browser.get('/auth/login');
      const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
      const response = await browser.get(`/auth/callback?code=0123456789abcdef0123&state=${state}`);
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      const problem = (await response.json()) as { code: string; detail: string };
      expect(problem.code).toBe('oauth_failed');
      expect(problem.detail).toContain('The code passed is incorrect or expired.');
    });

    it('a login the user declined on GitHub', async () => {
      const browser = new OAuthBrowser(h.url);
      const start = await browser.get('/auth/login');
      const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
      const response = await browser.get(
        `/auth/callback?error=access_denied&error_description=The+user+has+denied+your+application+access.&state=${state}`,
      );
      expect(response.status).toBe(401);
      expect(((await response.json()) as { detail: string }).detail).toContain('denied');
    });

    it('a forged or unknown session cookie', async () => {
      for (const cookie of [`zekt_session=zks_${'A'.repeat(43)}`, 'zekt_session=nonsense']) {
        const response = await fetch(`${h.url}/api/v1/me`, { headers: { cookie } });
        expect(response.status).toBe(401);
      }
    });
  });
});

describe('console login without OAuth credentials', () => {
  it('explains what to configure', async () => {
    const bare = await startHarness({ env: { GITHUB_CLIENT_ID: '', GITHUB_CLIENT_SECRET: '' } });
    try {
      const response = await fetch(`${bare.url}/auth/login`, { redirect: 'manual' });
      expect(response.status).toBe(503);
      const problem = (await response.json()) as { code: string; detail: string };
      expect(problem.code).toBe('oauth_not_configured');
      expect(problem.detail).toContain('GITHUB_CLIENT_ID');
    } finally {
      await bare.close();
    }
  });
});

describe('console login over https', () => {
  it('names its cookies __Host- and marks them Secure, HttpOnly and SameSite=Lax', async () => {
    const secure = await startHarness({ env: { ZEKT_BASE_URL: 'https://zekt.example.com' } });
    try {
      const start = await secure.zekt.http.inject({ method: 'GET', url: '/auth/login' });
      expect(start.statusCode).toBe(302);
      expect(start.headers['set-cookie']).toMatch(
        /^__Host-zekt_oauth=[A-Za-z0-9_.-]+; Max-Age=600; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
      );
    } finally {
      await secure.close();
    }
  });
});
