import { App } from '@octokit/app';
import { Octokit } from '@octokit/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  api,
  appJwt,
  installationToken,
  manualClock,
  userAccessToken,
} from '../test/support/github-client.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import type { GitHubSimulator, SimulatorOptions } from './index.js';

let sim: GitHubSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(options: SimulatorOptions = {}): Promise<GitHubSimulator> {
  sim = await createTestSimulator(options);
  return sim;
}

const CALLBACK = 'http://127.0.0.1:3000/auth/github/callback';

const ERRORS = {
  incorrect_client_credentials: {
    error: 'incorrect_client_credentials',
    error_description: 'The client_id and/or client_secret passed are incorrect.',
    error_uri:
      'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#incorrect-client-credentials',
  },
  redirect_uri_mismatch: {
    error: 'redirect_uri_mismatch',
    error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
    error_uri:
      'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch2',
  },
  bad_verification_code: {
    error: 'bad_verification_code',
    error_description: 'The code passed is incorrect or expired.',
    error_uri:
      'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code',
  },
};

/** `GET /login/oauth/authorize` as a browser would send it, without following the redirect. */
function authorize(s: GitHubSimulator, params: Record<string, string>): Promise<Response> {
  const url = new URL(`${s.url}/login/oauth/authorize`);
  url.search = new URLSearchParams(params).toString();
  return fetch(url, { redirect: 'manual' });
}

/** The code of a 302 from the authorize endpoint. */
function codeOf(response: Response): string {
  expect(response.status).toBe(302);
  const code = new URL(response.headers.get('location') ?? '').searchParams.get('code');
  expect(code).toMatch(/^[0-9a-f]{20}$/);
  return code ?? '';
}

async function codeFor(s: GitHubSimulator, login: string, redirectUri = CALLBACK): Promise<string> {
  return codeOf(await authorize(s, { client_id: s.app.clientId, redirect_uri: redirectUri, login }));
}

interface ExchangeOptions {
  /** How the parameters travel; default a form-encoded body. */
  via?: 'form' | 'json' | 'query';
  /** Default `application/json`; null sends no Accept header. */
  accept?: string | null;
}

/** `POST /login/oauth/access_token`; the answer's body as text plus its content type. */
async function exchange(s: GitHubSimulator, params: Record<string, string>, options: ExchangeOptions = {}) {
  const via = options.via ?? 'form';
  const headers: Record<string, string> = {};
  const accept = options.accept === undefined ? 'application/json' : options.accept;
  if (accept !== null) headers.accept = accept;
  let url = `${s.url}/login/oauth/access_token`;
  let body: string | undefined;
  if (via === 'form') {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(params).toString();
  } else if (via === 'json') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(params);
  } else {
    url += `?${new URLSearchParams(params).toString()}`;
  }
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

async function exchangeJson(
  s: GitHubSimulator,
  params: Record<string, string>,
  via?: ExchangeOptions['via'],
) {
  const answer = await exchange(s, params, via === undefined ? {} : { via });
  expect(answer.status).toBe(200);
  expect(answer.type).toMatch(/^application\/json/);
  return JSON.parse(answer.text) as Record<string, unknown>;
}

function credentials(s: GitHubSimulator, code: string): Record<string, string> {
  return { client_id: s.app.clientId, client_secret: s.app.clientSecret, code };
}

async function listedAccounts(s: GitHubSimulator, token: string): Promise<string[]> {
  const listed = await api(s, 'GET', '/user/installations', { authorization: `token ${token}` });
  expect(listed.status).toBe(200);
  const body = listed.body as { total_count: number; installations: Array<{ account: { login: string } }> };
  expect(body.total_count).toBe(body.installations.length);
  return body.installations.map((installation) => installation.account.login);
}

async function control(s: GitHubSimulator, method: string, path: string, body?: unknown) {
  const response = await fetch(`${s.url}/_sim${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
}

describe('the OAuth web flow for GitHub App user access tokens', () => {
  it('authorizes, exchanges the code, and the token reads /user and /user/installations', async () => {
    const s = await start();
    const acme = await s.createInstallation({
      account: { login: 'acme', type: 'Organization' },
      repositories: ['provider'],
      sender: { login: 'octocat' },
    });
    const own = await s.createInstallation({
      account: { login: 'octocat' },
      repositories: ['dotfiles', { name: 'secret', private: true }],
    });
    await s.createInstallation({ account: { login: 'globex', type: 'Organization' }, repositories: ['x'] });
    await s.createInstallation({ account: { login: 'bob' }, repositories: ['y'] });

    const authorized = await authorize(s, {
      client_id: s.app.clientId,
      redirect_uri: `${CALLBACK}?next=%2Fconsole`,
      state: 'st4te',
      scope: 'read:user',
      login: 'octocat',
    });
    expect(authorized.status).toBe(302);
    const location = new URL(authorized.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
    expect(Object.fromEntries(location.searchParams)).toEqual({
      next: '/console',
      code: expect.stringMatching(/^[0-9a-f]{20}$/),
      state: 'st4te',
    });

    const token = await exchangeJson(s, credentials(s, location.searchParams.get('code') ?? ''));
    expect(token).toEqual({
      access_token: expect.stringMatching(/^ghu_[A-Za-z0-9]{36}$/),
      expires_in: 28800,
      refresh_token: expect.stringMatching(/^ghr_[A-Za-z0-9]{76}$/),
      refresh_token_expires_in: 15897600,
      token_type: 'bearer',
      scope: '',
    });
    const accessToken = String(token.access_token);

    const user = await api(s, 'GET', '/user', { authorization: `Bearer ${accessToken}` });
    expect(user.status).toBe(200);
    expect(user.body).toMatchObject({
      login: 'octocat',
      id: own.installation.account.id,
      node_id: own.installation.account.node_id,
      type: 'User',
      user_view_type: 'private',
      site_admin: false,
      html_url: `${s.url}/octocat`,
      url: `${s.apiUrl}/users/octocat`,
      name: 'octocat',
      public_repos: 1,
      total_private_repos: 1,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });

    // Its own account and the organisation it installed the App on; not globex, not bob.
    const listed = await api(s, 'GET', '/user/installations', { authorization: `token ${accessToken}` });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('link')).toBeNull();
    expect(listed.body).toEqual({ total_count: 2, installations: [acme.installation, own.installation] });

    const journal = s.journal();
    expect(journal.map((entry) => `${entry.method} ${entry.path} ${entry.status}`)).toEqual(
      expect.arrayContaining([
        'GET /login/oauth/authorize 302',
        'POST /login/oauth/access_token 200',
        'GET /api/v3/user 200',
      ]),
    );
    expect(journal.find((entry) => entry.path === '/api/v3/user')?.auth).toEqual({
      kind: 'user',
      login: 'octocat',
    });
  });

  it('takes the parameters as a JSON body or in the query, and answers form-encoded unless JSON is accepted', async () => {
    const s = await start();
    const jsonBody = await exchange(s, credentials(s, await codeFor(s, 'alice')), {
      via: 'json',
      accept: null,
    });
    expect(jsonBody.status).toBe(200);
    expect(jsonBody.type).toMatch(/^application\/x-www-form-urlencoded/);
    const form = new URLSearchParams(jsonBody.text);
    // Keys sorted, as GitHub writes them.
    expect([...form.keys()]).toEqual([
      'access_token',
      'expires_in',
      'refresh_token',
      'refresh_token_expires_in',
      'scope',
      'token_type',
    ]);
    expect(Object.fromEntries(form)).toMatchObject({
      access_token: expect.stringMatching(/^ghu_/),
      expires_in: '28800',
      refresh_token_expires_in: '15897600',
      scope: '',
      token_type: 'bearer',
    });

    const inQuery = await exchangeJson(s, credentials(s, await codeFor(s, 'alice')), 'query');
    expect(inQuery.access_token).toMatch(/^ghu_/);
    const asJson = await exchangeJson(s, credentials(s, await codeFor(s, 'alice')), 'json');
    expect(asJson.access_token).toMatch(/^ghu_/);
    // With `redirect_uri` repeated, as well-behaved clients do.
    const repeated = await exchangeJson(s, {
      ...credentials(s, await codeFor(s, 'alice')),
      redirect_uri: CALLBACK,
    });
    expect(repeated.access_token).toMatch(/^ghu_/);
    const user = await api(s, 'GET', '/user', { authorization: `token ${String(asJson.access_token)}` });
    expect(user.body).toMatchObject({ login: 'alice' });
  });
});

describe('organisation membership decides which installations a user sees', () => {
  it('lists own and member organisations’ installations; addOrgMember/removeOrgMember and their control routes change it', async () => {
    const s = await start();
    const acme = await s.createInstallation({
      account: { login: 'acme', type: 'Organization' },
      repositories: ['svc'],
    });
    const token = await userAccessToken(s, 'alice', CALLBACK);
    expect(await listedAccounts(s, token)).toEqual([]);
    // The default installer of an organisation is its member.
    expect(await listedAccounts(s, await userAccessToken(s, 'acme-admin', CALLBACK))).toEqual(['acme']);

    s.addOrgMember('acme', 'alice');
    s.addOrgMember('ACME', 'Alice'); // logins are case-insensitive; adding twice is harmless
    expect(await listedAccounts(s, token)).toEqual(['acme']);
    s.removeOrgMember('acme', 'alice');
    expect(await listedAccounts(s, token)).toEqual([]);

    expect(await control(s, 'PUT', '/orgs/acme/members/alice')).toEqual({ status: 204, body: null });
    expect(await listedAccounts(s, token)).toEqual(['acme']);
    expect(await control(s, 'DELETE', '/orgs/acme/members/alice')).toEqual({ status: 204, body: null });
    expect(await listedAccounts(s, token)).toEqual([]);

    await s.createInstallation({ account: { login: 'alice' }, repositories: ['own'] });
    s.addOrgMember('acme', 'alice');
    expect(await listedAccounts(s, token)).toEqual(['acme', 'alice']);
    // Deleted installations are not listed.
    await s.deleteInstallation(acme.installation.id);
    expect(await listedAccounts(s, token)).toEqual(['alice']);
  });

  it('refuses unknown organisations (404) and logins that are not users (400)', async () => {
    const s = await start();
    await s.createInstallation({ account: { login: 'acme', type: 'Organization' }, repositories: ['svc'] });
    await s.createInstallation({ account: { login: 'bob' }, repositories: ['svc'] });

    expect(() => s.addOrgMember('nope', 'alice')).toThrow(/no organisation "nope"/);
    expect(() => s.addOrgMember('bob', 'alice')).toThrow(/no organisation "bob"/);
    expect(() => s.addOrgMember('acme', 'not a login')).toThrow(/GitHub login/);
    expect(() => s.addOrgMember('acme', 'acme')).toThrow(/organisation, not a user/);

    for (const method of ['PUT', 'DELETE']) {
      expect(await control(s, method, '/orgs/nope/members/alice')).toEqual({
        status: 404,
        body: { error: 'no organisation "nope"' },
      });
      expect(await control(s, method, '/orgs/bob/members/alice')).toMatchObject({ status: 404 });
      expect(await control(s, method, '/orgs/acme/members/-bad-')).toMatchObject({
        status: 400,
        body: { error: expect.stringContaining('GitHub login') },
      });
    }
  });

  it('creates an unknown member as a user, who then appears on the sign-in page', async () => {
    const s = await start();
    await s.createInstallation({ account: { login: 'acme', type: 'Organization' }, repositories: ['svc'] });
    s.addOrgMember('acme', 'newcomer');
    const page = await authorize(s, { client_id: s.app.clientId, redirect_uri: CALLBACK });
    expect(await page.text()).toContain('>newcomer</a>');
  });
});

describe('the signed-in browser user', () => {
  it('is authorized at once (signIn and the control route); the login parameter and prompt=select_account win', async () => {
    const s = await start();
    const params = { client_id: s.app.clientId, redirect_uri: CALLBACK, state: 's' };
    const loginOf = async (response: Response) => {
      const token = await exchangeJson(s, credentials(s, codeOf(response)));
      const user = await api(s, 'GET', '/user', { authorization: `token ${String(token.access_token)}` });
      return (user.body as { login: string }).login;
    };

    expect((await authorize(s, params)).status).toBe(200);
    s.signIn('carol');
    expect(await loginOf(await authorize(s, params))).toBe('carol');
    expect(await loginOf(await authorize(s, { ...params, login: 'dave' }))).toBe('dave');
    // Authorizing as someone else does not change who is signed in.
    expect(await loginOf(await authorize(s, params))).toBe('carol');
    const picker = await authorize(s, { ...params, prompt: 'select_account' });
    expect(picker.status).toBe(200);
    expect(await picker.text()).toContain('>carol</a>');

    expect(await control(s, 'PUT', '/oauth/signed-in', { login: 'erin' })).toEqual({
      status: 204,
      body: null,
    });
    expect(await loginOf(await authorize(s, params))).toBe('erin');
    expect(await control(s, 'PUT', '/oauth/signed-in', { login: null })).toEqual({ status: 204, body: null });
    expect((await authorize(s, params)).status).toBe(200);
    s.signIn('carol');
    s.signIn(null);
    expect((await authorize(s, params)).status).toBe(200);

    for (const body of [{}, { login: 5 }, { login: 'no spaces' }]) {
      expect(await control(s, 'PUT', '/oauth/signed-in', body)).toMatchObject({
        status: 400,
        body: { error: expect.any(String) },
      });
    }
    await s.createInstallation({ account: { login: 'acme', type: 'Organization' }, repositories: ['svc'] });
    expect(() => s.signIn('acme')).toThrow(/organisation, not a user/);
  });
});

describe('the sign-in page (nobody signed in)', () => {
  it('lists the known users as links and offers a form, both keeping the authorize parameters', async () => {
    const s = await start({ app: { name: 'Zekt Console' } });
    await s.createInstallation({ account: { login: 'acme', type: 'Organization' }, repositories: ['svc'] });
    await s.createInstallation({ account: { login: 'octocat' }, repositories: ['svc'] });
    const page = await authorize(s, { client_id: s.app.clientId, redirect_uri: CALLBACK, state: 'a&b' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('Sign in to GitHub to continue to Zekt Console');
    // Users only: acme-admin (the default installer) and octocat; not the organisation, not the App's bot.
    const links = [...html.matchAll(/<a href="([^"]*)">([^<]*)<\/a>/g)].map((match) => [match[1], match[2]]);
    expect(links.map(([, login]) => login)).toEqual(['acme-admin', 'octocat']);
    const [href] = links.find(([, login]) => login === 'octocat') ?? [''];
    const followed = await fetch(`${s.url}${(href ?? '').replaceAll('&amp;', '&')}`, { redirect: 'manual' });
    expect(new URL(followed.headers.get('location') ?? '').searchParams.get('state')).toBe('a&b');
    const token = await exchangeJson(s, credentials(s, codeOf(followed)));
    const user = await api(s, 'GET', '/user', { authorization: `token ${String(token.access_token)}` });
    expect(user.body).toMatchObject({ login: 'octocat' });

    expect(html).toContain('<form method="get" action="/login/oauth/authorize">');
    expect(html).toContain(`<input type="hidden" name="client_id" value="${s.app.clientId}">`);
    expect(html).toContain(`<input type="hidden" name="redirect_uri" value="${CALLBACK}">`);
    expect(html).toContain('<input type="hidden" name="state" value="a&amp;b">');
    expect(html).toMatch(/<input type="text" name="login" value=""/);
  });

  it('escapes a hostile state, login and App name', async () => {
    const s = await start({ app: { name: '<b>Evil</b> App' } });
    const state = '"><script>alert(1)</script>';
    const login = '<img src=x onerror=alert(1)>';
    const page = await authorize(s, { client_id: s.app.clientId, redirect_uri: CALLBACK, state, login });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>');
    expect(html).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(html).toContain('value="&lt;img src=x onerror=alert(1)&gt;"');
    expect(html).toContain('&lt;b&gt;Evil&lt;/b&gt; App');
    expect(html).toMatch(/<p role="alert">login must be a GitHub login/);
  });
});

describe('authorize errors', () => {
  it('answers 404 for an unknown client_id and 400 for a missing or non-http(s) redirect_uri', async () => {
    const s = await start();
    for (const clientId of ['Iv23linope', '']) {
      const response = await authorize(s, { client_id: clientId, redirect_uri: CALLBACK, login: 'alice' });
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await response.text()).toContain('was not found');
    }
    const missing = await authorize(s, { client_id: s.app.clientId, login: 'alice' });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('redirect_uri is required');
    for (const redirectUri of ['ftp://example.com/cb', '/relative/cb', 'javascript:alert(1)']) {
      const response = await authorize(s, {
        client_id: s.app.clientId,
        redirect_uri: redirectUri,
        login: 'a',
      });
      expect(response.status, redirectUri).toBe(400);
      expect(await response.text()).toContain('absolute http(s) URL');
    }
    expect(s.journal().filter((entry) => entry.status === 302)).toEqual([]);
  });

  it('with callback URLs configured, admits only the same scheme, host, port and a path at or below', async () => {
    const s = await start({
      app: { callbackUrls: ['http://127.0.0.1:3000/auth/github', 'https://zekt.example/console/'] },
    });
    const admitted = [
      'http://127.0.0.1:3000/auth/github',
      'http://127.0.0.1:3000/auth/github/callback?next=%2F',
      'https://zekt.example/console/login',
      'https://zekt.example:443/console/',
    ];
    for (const redirectUri of admitted) {
      const response = await authorize(s, {
        client_id: s.app.clientId,
        redirect_uri: redirectUri,
        login: 'a',
      });
      expect(response.status, redirectUri).toBe(302);
    }
    const refused = [
      'http://127.0.0.1:3001/auth/github',
      'https://127.0.0.1:3000/auth/github',
      'http://localhost:3000/auth/github',
      'http://127.0.0.1:3000/auth/githubx',
      'http://127.0.0.1:3000/auth',
      'https://zekt.example/console',
      'https://evil.zekt.example/console/',
    ];
    for (const redirectUri of refused) {
      const response = await authorize(s, {
        client_id: s.app.clientId,
        redirect_uri: redirectUri,
        login: 'a',
      });
      expect(response.status, redirectUri).toBe(400);
      expect(await response.text()).toContain('The redirect_uri is not associated with this application.');
    }

    // Without redirect_uri, GitHub uses the first callback URL…
    const fallback = await authorize(s, { client_id: s.app.clientId, login: 'alice', state: 'x' });
    const location = new URL(fallback.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1:3000/auth/github');
    // …and the exchange may then name any redirect_uri the callback URLs admit, but no other.
    const code = codeOf(fallback);
    expect(
      await exchangeJson(s, { ...credentials(s, code), redirect_uri: 'http://127.0.0.1:9/elsewhere' }),
    ).toEqual(ERRORS.redirect_uri_mismatch);
    const token = await exchangeJson(s, {
      ...credentials(s, code),
      redirect_uri: 'http://127.0.0.1:3000/auth/github/callback',
    });
    expect(token.access_token).toMatch(/^ghu_/);
  });

  it('refuses callback URLs that are not http(s) URLs when the simulator starts', async () => {
    await expect(createTestSimulator({ app: { callbackUrls: ['not a url'] } })).rejects.toThrow(
      /callbackUrls/,
    );
    await expect(
      createTestSimulator({ app: { callbackUrls: Array.from({ length: 11 }, () => CALLBACK) } }),
    ).rejects.toThrow(/at most 10/);
  });
});

describe('code exchange errors (HTTP 200 with an error body, as on GitHub)', () => {
  it('refuses wrong credentials, a different redirect_uri, unknown, reused and expired codes', async () => {
    const clock = manualClock();
    const s = await start({ clock });
    const code = await codeFor(s, 'alice');

    expect(await exchangeJson(s, { ...credentials(s, code), client_id: 'Iv23linope' })).toEqual(
      ERRORS.incorrect_client_credentials,
    );
    expect(await exchangeJson(s, { ...credentials(s, code), client_secret: 'wrong' })).toEqual(
      ERRORS.incorrect_client_credentials,
    );
    expect(
      await exchangeJson(s, { ...credentials(s, code), client_secret: `${s.app.clientSecret}0` }),
    ).toEqual(ERRORS.incorrect_client_credentials);
    expect(await exchangeJson(s, { client_id: s.app.clientId, code })).toEqual(
      ERRORS.incorrect_client_credentials,
    );
    expect(await exchangeJson(s, { ...credentials(s, code), redirect_uri: `${CALLBACK}/other` })).toEqual(
      ERRORS.redirect_uri_mismatch,
    );
    expect(await exchangeJson(s, credentials(s, 'abcdef0123456789abcd'))).toEqual(
      ERRORS.bad_verification_code,
    );
    expect(await exchangeJson(s, { client_id: s.app.clientId, client_secret: s.app.clientSecret })).toEqual(
      ERRORS.bad_verification_code,
    );

    // Failed attempts do not use the code up; a successful one does.
    expect((await exchangeJson(s, credentials(s, code))).access_token).toMatch(/^ghu_/);
    expect(await exchangeJson(s, credentials(s, code))).toEqual(ERRORS.bad_verification_code);

    // Codes live ten minutes by the simulator's clock.
    const fresh = await codeFor(s, 'alice');
    const stale = await codeFor(s, 'alice');
    clock.advanceSeconds(599);
    expect((await exchangeJson(s, credentials(s, fresh))).access_token).toMatch(/^ghu_/);
    clock.advanceSeconds(2);
    expect(await exchangeJson(s, credentials(s, stale))).toEqual(ERRORS.bad_verification_code);
  });

  it('answers errors form-encoded without Accept: application/json, exactly as GitHub words them', async () => {
    const s = await start();
    const answer = await exchange(s, credentials(s, 'abcdef0123456789abcd'), { accept: null });
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/^application\/x-www-form-urlencoded/);
    expect(answer.text).toBe(
      'error=bad_verification_code&error_description=The+code+passed+is+incorrect+or+expired.&error_uri=https%3A%2F%2Fdocs.github.com%2Fapps%2Fmanaging-oauth-apps%2Ftroubleshooting-oauth-app-access-token-request-errors%2F%23bad-verification-code',
    );
  });
});

describe('user access tokens on the REST API', () => {
  it('expire after eight hours of the simulator’s clock (401 Bad credentials)', async () => {
    const clock = manualClock();
    const s = await start({ clock });
    const token = await userAccessToken(s, 'alice', CALLBACK);
    clock.advanceSeconds(8 * 3600 - 1);
    expect((await api(s, 'GET', '/user', { authorization: `token ${token}` })).status).toBe(200);
    clock.advanceSeconds(2);
    for (const path of ['/user', '/user/installations']) {
      const expired = await api(s, 'GET', path, { authorization: `token ${token}` });
      expect(expired.status).toBe(401);
      expect(expired.body).toEqual({
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
    }
    expect(s.journal().at(-1)?.auth).toEqual({ kind: 'rejected', reason: 'Bad credentials' });
  });

  it('answer 401 without credentials and 403 to installation tokens and App JWTs', async () => {
    const s = await start();
    const { installation } = await s.createInstallation({
      account: { login: 'alice' },
      repositories: ['one'],
    });
    const installationAuth = `token ${await installationToken(s, installation.id)}`;
    const jwtAuth = `Bearer ${await appJwt(s)}`;

    expect(await api(s, 'GET', '/user')).toMatchObject({
      status: 401,
      body: {
        message: 'Requires authentication',
        documentation_url: 'https://docs.github.com/rest/users/users#get-the-authenticated-user',
        status: '401',
      },
    });
    for (const authorization of [installationAuth, jwtAuth]) {
      expect(await api(s, 'GET', '/user', { authorization })).toMatchObject({
        status: 403,
        body: {
          message: 'Resource not accessible by integration',
          documentation_url: 'https://docs.github.com/rest/users/users#get-the-authenticated-user',
          status: '403',
        },
      });
    }

    const listDocs =
      'https://docs.github.com/rest/apps/installations#list-app-installations-accessible-to-the-user-access-token';
    expect(await api(s, 'GET', '/user/installations')).toMatchObject({
      status: 401,
      body: { message: 'Requires authentication', documentation_url: listDocs, status: '401' },
    });
    for (const authorization of [installationAuth, jwtAuth]) {
      expect(await api(s, 'GET', '/user/installations', { authorization })).toMatchObject({
        status: 403,
        body: {
          message:
            'You must authenticate with an access token authorized to a GitHub App in order to list installations',
          documentation_url: listDocs,
          status: '403',
        },
      });
    }
  });

  it('are refused on App-only and installation-only routes as other wrong credentials are', async () => {
    const s = await start();
    const { installation } = await s.createInstallation({
      account: { login: 'alice' },
      repositories: ['one'],
    });
    const auth = `Bearer ${await userAccessToken(s, 'alice', CALLBACK)}`;

    for (const [method, path] of [
      ['GET', '/app'],
      ['GET', '/app/installations'],
      ['GET', `/app/installations/${installation.id}`],
      ['POST', `/app/installations/${installation.id}/access_tokens`],
      ['GET', '/repos/alice/one/installation'],
    ] as const) {
      const response = await api(s, method, path, { authorization: auth });
      expect(response.status, path).toBe(401);
      expect(response.body, path).toMatchObject({ message: 'A JSON web token could not be decoded' });
    }
    for (const [method, path, body] of [
      ['GET', '/installation/repositories', undefined],
      ['GET', '/repos/alice/one', undefined],
      ['GET', '/repos/alice/one/hooks', undefined],
      ['POST', '/repos/alice/one/dispatches', { event_type: 'go' }],
    ] as const) {
      const response = await api(s, method, path, { authorization: auth, body });
      expect(response.status, path).toBe(403);
      expect(response.body, path).toMatchObject({ message: 'Resource not accessible by integration' });
    }
    expect(s.dispatches()).toEqual([]);
  });

  it('count against the user’s own rate limit and name the user in a primary-rate-limit fault', async () => {
    const s = await start();
    const token = await userAccessToken(s, 'alice', CALLBACK);
    const user = await api(s, 'GET', '/user', { authorization: `token ${token}` });
    expect(user.headers.get('x-ratelimit-limit')).toBe('5000');
    s.injectFaults({ path: '/user', faults: [{ kind: 'rate_limit' }] });
    const limited = await api(s, 'GET', '/user', { authorization: `token ${token}` });
    expect(limited.status).toBe(403);
    expect(limited.body).toMatchObject({
      message: `API rate limit exceeded for user ID ${(user.body as { id: number }).id}.`,
    });
  });
});

describe('pagination of /user/installations', () => {
  it('pages with per_page and page and links the pages like GitHub', async () => {
    const s = await start();
    for (const org of ['org-a', 'org-b', 'org-c', 'org-d']) {
      await s.createInstallation({
        account: { login: org, type: 'Organization' },
        repositories: ['svc'],
        sender: { login: 'alice' },
      });
    }
    await s.createInstallation({ account: { login: 'alice' }, repositories: ['own'] });
    const auth = `token ${await userAccessToken(s, 'alice', CALLBACK)}`;
    const pageOf = (query: string) => api(s, 'GET', `/user/installations${query}`, { authorization: auth });
    const logins = (body: unknown) =>
      (body as { installations: Array<{ account: { login: string } }> }).installations.map(
        (i) => i.account.login,
      );
    const link = (query: string) => `${s.apiUrl}/user/installations?${query}`;

    const first = await pageOf('?per_page=2');
    expect(first.body).toMatchObject({ total_count: 5 });
    expect(logins(first.body)).toEqual(['org-a', 'org-b']);
    expect(first.headers.get('link')).toBe(
      `<${link('per_page=2&page=2')}>; rel="next", <${link('per_page=2&page=3')}>; rel="last"`,
    );
    const second = await pageOf('?per_page=2&page=2');
    expect(logins(second.body)).toEqual(['org-c', 'org-d']);
    expect(second.headers.get('link')).toBe(
      [
        `<${link('per_page=2&page=1')}>; rel="prev"`,
        `<${link('per_page=2&page=3')}>; rel="next"`,
        `<${link('per_page=2&page=3')}>; rel="last"`,
        `<${link('per_page=2&page=1')}>; rel="first"`,
      ].join(', '),
    );
    const last = await pageOf('?page=3&per_page=2');
    expect(logins(last.body)).toEqual(['alice']);
    expect(last.headers.get('link')).toBe(
      `<${link('page=2&per_page=2')}>; rel="prev", <${link('page=1&per_page=2')}>; rel="first"`,
    );
    const beyond = await pageOf('?per_page=2&page=9');
    expect(beyond.body).toEqual({ total_count: 5, installations: [] });

    // Default 30 a page; per_page is capped at 100.
    for (const query of ['', '?per_page=1000', '?per_page=nope']) {
      const all = await pageOf(query);
      expect(logins(all.body), query).toHaveLength(5);
      expect(all.headers.get('link'), query).toBeNull();
    }
  });

  it('links the pages of GET /app/installations too', async () => {
    const s = await start();
    for (const login of ['a1', 'a2', 'a3'])
      await s.createInstallation({ account: { login }, repositories: ['r'] });
    const response = await api(s, 'GET', '/app/installations?per_page=2', {
      authorization: `Bearer ${await appJwt(s)}`,
    });
    expect(response.body).toHaveLength(2);
    expect(response.headers.get('link')).toBe(
      `<${s.apiUrl}/app/installations?per_page=2&page=2>; rel="next", <${s.apiUrl}/app/installations?per_page=2&page=2>; rel="last"`,
    );
  });
});

describe('unmodified Octokit', () => {
  it('runs the web flow with @octokit/app’s OAuth client and reads the user and installations with @octokit/core', async () => {
    const clock = manualClock(new Date('2030-01-01T00:00:00Z'));
    const s = await start({ clock, app: { callbackUrls: [CALLBACK] } });
    const { installation } = await s.createInstallation({
      account: { login: 'acme', type: 'Organization' },
      repositories: ['svc'],
      sender: { login: 'octocat' },
    });
    const app = new App({
      appId: s.app.id,
      privateKey: s.app.privateKeyPem,
      oauth: { clientId: s.app.clientId, clientSecret: s.app.clientSecret },
      Octokit: Octokit.defaults({ baseUrl: s.apiUrl }),
    });
    const { url } = app.oauth.getWebFlowAuthorizationUrl({ state: 'octo-state', login: 'octocat' });
    expect(url.startsWith(`${s.url}/login/oauth/authorize?`)).toBe(true);
    const authorized = await fetch(url, { redirect: 'manual' });
    const location = new URL(authorized.headers.get('location') ?? '');
    expect(location.searchParams.get('state')).toBe('octo-state');

    const { authentication } = await app.oauth.createToken({ code: codeOf(authorized) });
    expect(authentication.token).toMatch(/^ghu_/);
    expect(authentication).toMatchObject({
      expiresAt: '2030-01-01T08:00:00.000Z',
      refreshToken: expect.stringMatching(/^ghr_/),
    });
    await expect(app.oauth.createToken({ code: codeOf(authorized) })).rejects.toThrow(
      /bad_verification_code/,
    );

    const octokit = new Octokit({ auth: authentication.token, baseUrl: s.apiUrl });
    const { data: user } = await octokit.request('GET /user');
    expect(user).toMatchObject({ login: 'octocat', type: 'User' });
    const { data } = await octokit.request('GET /user/installations', { per_page: 100 });
    expect(data.total_count).toBe(1);
    expect(data.installations.map((entry) => entry.id)).toEqual([installation.id]);
  });
});
