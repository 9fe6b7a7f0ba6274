import { generateKeyPairSync } from 'node:crypto';
import { App } from '@octokit/app';
import { Octokit } from '@octokit/core';
import { type JWTPayload, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { api, appJwt, installationToken, manualClock, signAppJwt } from '../test/support/github-client.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import { JWT_MESSAGES } from './app-jwt.js';
import type { GitHubSimulator } from './index.js';

let sim: GitHubSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('App JWT → installation token → dispatch (unmodified @octokit/app)', () => {
  it('creates a token, dispatches, records the dispatch, and journals the token request first', async () => {
    sim = await createTestSimulator();
    const { installation } = await sim.createInstallation({
      account: { login: 'acme', type: 'Organization' },
      repositories: ['consumer'],
    });

    const app = new App({
      appId: sim.app.id,
      privateKey: sim.app.privateKeyPem,
      Octokit: Octokit.defaults({ baseUrl: sim.apiUrl }),
    });
    const octokit = await app.getInstallationOctokit(installation.id);
    const response = await octokit.request('POST /repos/{owner}/{repo}/dispatches', {
      owner: 'acme',
      repo: 'consumer',
      event_type: 'zekt-workflow-completed',
      client_payload: { zekt: { version: 1 } },
    });

    expect(response.status).toBe(204);
    expect(sim.dispatches({ repository: 'acme/consumer' })).toEqual([
      expect.objectContaining({
        repository: 'acme/consumer',
        installationId: installation.id,
        eventType: 'zekt-workflow-completed',
        clientPayload: { zekt: { version: 1 } },
      }),
    ]);
    const calls = sim.journal().map((entry) => `${entry.method} ${entry.path} ${entry.status}`);
    const tokenCall = calls.indexOf(`POST /api/v3/app/installations/${installation.id}/access_tokens 201`);
    const dispatchCall = calls.indexOf('POST /api/v3/repos/acme/consumer/dispatches 204');
    expect(tokenCall).toBeGreaterThanOrEqual(0);
    expect(dispatchCall).toBeGreaterThan(tokenCall);
    expect(sim.journal()[dispatchCall]?.auth).toEqual({
      kind: 'installation',
      installationId: installation.id,
    });
  });

  it('sends GitHub-style rate-limit and request-id headers on every API response', async () => {
    sim = await createTestSimulator();
    for (const path of ['/app', '/no/such/route']) {
      const response = await api(sim, 'GET', path, { authorization: `Bearer ${await appJwt(sim)}` });
      expect(response.headers.get('x-ratelimit-limit')).toBe('5000');
      expect(Number(response.headers.get('x-ratelimit-remaining'))).toBeLessThan(5000);
      expect(response.headers.get('x-ratelimit-resource')).toBe('core');
      expect(response.headers.get('x-ratelimit-used')).toMatch(/^\d+$/);
      expect(response.headers.get('x-ratelimit-reset')).toMatch(/^\d{10}$/);
      expect(response.headers.get('x-github-request-id')).toMatch(/^[0-9A-F]+(:[0-9A-F]+){4}$/);
    }
    const unknown = await api(sim, 'GET', '/no/such/route');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({
      message: 'Not Found',
      documentation_url: 'https://docs.github.com/rest',
      status: '404',
    });
  });
});

describe('App JWT rules', () => {
  const now = () => Math.floor(Date.now() / 1000);

  async function getApp(authorization: string) {
    if (sim === undefined) throw new Error('no simulator');
    return api(sim, 'GET', '/app', { authorization });
  }

  it("accepts Octokit's JWT (iat = now − 30, exp = iat + 600), the client id as iss, and iat 50 s ahead", async () => {
    sim = await createTestSimulator();
    const key = sim.app.privateKeyPem;
    const t = now();
    for (const claims of [
      { iss: sim.app.id, iat: t - 30, exp: t + 570 },
      { iss: String(sim.app.id), iat: t - 30, exp: t + 570 },
      { iss: sim.app.clientId, iat: t - 30, exp: t + 570 },
      { iss: sim.app.id, iat: t + 50, exp: t + 600 },
    ]) {
      const response = await getApp(`Bearer ${await signAppJwt(key, claims)}`);
      expect(response.status, JSON.stringify(claims)).toBe(200);
      expect(response.body).toMatchObject({ id: sim.app.id, slug: 'zekt-dev', client_id: sim.app.clientId });
    }
  });

  it('rejects expired, too-long-lived, future-issued, wrongly keyed and wrongly issued JWTs with 401', async () => {
    sim = await createTestSimulator();
    const key = sim.app.privateKeyPem;
    const t = now();
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const cases: Array<[string, string, string]> = [
      [
        'expired',
        await signAppJwt(key, { iss: sim.app.id, iat: t - 700, exp: t - 100 }),
        JWT_MESSAGES.expNotFuture,
      ],
      [
        'exp too far',
        await signAppJwt(key, { iss: sim.app.id, iat: t, exp: t + 660 }),
        JWT_MESSAGES.expTooFar,
      ],
      [
        'iat 2 min ahead',
        await signAppJwt(key, { iss: sim.app.id, iat: t + 120, exp: t + 500 }),
        JWT_MESSAGES.iatInvalid,
      ],
      ['iat missing', await signAppJwt(key, { iss: sim.app.id, exp: t + 500 }), JWT_MESSAGES.iatInvalid],
      [
        'wrong key',
        await signAppJwt(otherKey, { iss: sim.app.id, iat: t - 30, exp: t + 570 }),
        JWT_MESSAGES.undecodable,
      ],
      [
        'non-numeric iss',
        await signAppJwt(key, { iss: 'zekt', iat: t - 30, exp: t + 570 }),
        JWT_MESSAGES.issInvalid,
      ],
      ['garbage', 'not.a.jwt', JWT_MESSAGES.undecodable],
    ];
    for (const [name, token, message] of cases) {
      const response = await getApp(`Bearer ${token}`);
      expect(response.status, name).toBe(401);
      expect(response.body, name).toEqual({
        message,
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
    }
  });

  it('rejects alg none and HS256 (key confusion with the public key) with 401', async () => {
    sim = await createTestSimulator();
    const t = now();
    const claims = { iss: sim.app.id, iat: t - 30, exp: t + 570 };
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const none = `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`;
    const publicPem = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    const hs256 = await new SignJWT(claims as unknown as JWTPayload)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(String(publicPem)));
    for (const token of [none, hs256]) {
      const response = await getApp(`Bearer ${token}`);
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ message: JWT_MESSAGES.undecodable });
    }
  });

  it('answers 404 Integration not found for a numeric iss naming no App (as GitHub does for a wrong App id)', async () => {
    sim = await createTestSimulator();
    const t = now();
    const token = await signAppJwt(sim.app.privateKeyPem, { iss: sim.app.id + 1, iat: t - 30, exp: t + 570 });
    const response = await getApp(`Bearer ${token}`);
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ message: JWT_MESSAGES.integrationNotFound });
  });

  it('answers 401 without credentials and for an unknown token', async () => {
    sim = await createTestSimulator();
    expect((await api(sim, 'GET', '/app')).status).toBe(401);
    const unknown = await api(sim, 'GET', '/installation/repositories', {
      authorization: 'token ghs_unknown',
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ message: 'Bad credentials' });
  });

  it('keeps the App JWT and installation tokens to their own endpoints', async () => {
    sim = await createTestSimulator();
    const { installation } = await sim.createInstallation({
      account: { login: 'alice' },
      repositories: ['one'],
    });
    const token = await installationToken(sim, installation.id);
    const tokenOnApp = await api(sim, 'GET', '/app/installations', { authorization: `token ${token}` });
    expect(tokenOnApp.status).toBe(401);
    expect(tokenOnApp.body).toMatchObject({ message: JWT_MESSAGES.undecodable });
    const jwtOnRepo = await api(sim, 'GET', '/repos/alice/one', {
      authorization: `Bearer ${await appJwt(sim)}`,
    });
    expect(jwtOnRepo.status).toBe(403);
  });
});

describe('installation tokens', () => {
  it('reach only their installation’s repositories (404 elsewhere) and permissions (403 beyond)', async () => {
    sim = await createTestSimulator();
    const mine = await sim.createInstallation({ account: { login: 'alice' }, repositories: ['one', 'two'] });
    await sim.createInstallation({ account: { login: 'bob' }, repositories: ['other'] });
    const readOnly = await sim.createInstallation({
      account: { login: 'carol' },
      repositories: ['docs'],
      permissions: { metadata: 'read', contents: 'read' },
    });
    const token = await installationToken(sim, mine.installation.id);

    const own = await api(sim, 'GET', '/repos/alice/one', { authorization: `token ${token}` });
    expect(own.status).toBe(200);
    const foreign = await api(sim, 'GET', '/repos/bob/other', { authorization: `token ${token}` });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ message: 'Not Found' });
    const foreignDispatch = await api(sim, 'POST', '/repos/bob/other/dispatches', {
      authorization: `Bearer ${token}`,
      body: { event_type: 'x' },
    });
    expect(foreignDispatch.status).toBe(404);

    const narrowed = await installationToken(sim, mine.installation.id, { repositories: ['one'] });
    expect((await api(sim, 'GET', '/repos/alice/two', { authorization: `token ${narrowed}` })).status).toBe(
      404,
    );

    const readOnlyToken = await installationToken(sim, readOnly.installation.id);
    const forbidden = await api(sim, 'POST', '/repos/carol/docs/dispatches', {
      authorization: `token ${readOnlyToken}`,
      body: { event_type: 'x' },
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ message: 'Resource not accessible by integration' });
    expect(forbidden.headers.get('x-accepted-github-permissions')).toBe('contents=write');
    const listed = await api(sim, 'GET', '/installation/repositories', { authorization: `token ${token}` });
    expect(
      (listed.body as { repositories: Array<{ full_name: string }> }).repositories.map((r) => r.full_name),
    ).toEqual(['alice/one', 'alice/two']);
  });

  it('refuses narrowing to repositories or permissions the installation does not have (422)', async () => {
    sim = await createTestSimulator();
    const { installation } = await sim.createInstallation({
      account: { login: 'alice' },
      repositories: ['one'],
    });
    const jwt = await appJwt(sim);
    const path = `/app/installations/${installation.id}/access_tokens`;
    const badRepo = await api(sim, 'POST', path, {
      authorization: `Bearer ${jwt}`,
      body: { repositories: ['nope'] },
    });
    expect(badRepo.status).toBe(422);
    const badPermission = await api(sim, 'POST', path, {
      authorization: `Bearer ${jwt}`,
      body: { permissions: { administration: 'write' } },
    });
    expect(badPermission.status).toBe(422);
    const narrowed = await api(sim, 'POST', path, {
      authorization: `Bearer ${jwt}`,
      body: { permissions: { contents: 'read' } },
    });
    expect(narrowed.status).toBe(201);
    expect(narrowed.body).toMatchObject({ permissions: { contents: 'read', metadata: 'read' } });
  });

  it('expire after one hour of the injected clock (401 Bad credentials)', async () => {
    const clock = manualClock();
    sim = await createTestSimulator({ clock });
    const { installation } = await sim.createInstallation({
      account: { login: 'alice' },
      repositories: ['one'],
    });
    const created = await api(sim, 'POST', `/app/installations/${installation.id}/access_tokens`, {
      authorization: `Bearer ${await appJwt(sim)}`,
    });
    const { token, expires_at } = created.body as { token: string; expires_at: string };
    expect(token).toMatch(/^ghs_[A-Za-z0-9]{36}$/);
    expect(Date.parse(expires_at) - clock.now().getTime()).toBeGreaterThan(3599_000);

    clock.advanceSeconds(3599);
    expect((await api(sim, 'GET', '/repos/alice/one', { authorization: `token ${token}` })).status).toBe(200);
    clock.advanceSeconds(2);
    const expired = await api(sim, 'GET', '/repos/alice/one', { authorization: `token ${token}` });
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ message: 'Bad credentials' });
  });

  it('stop working when the installation is deleted', async () => {
    sim = await createTestSimulator();
    const { installation } = await sim.createInstallation({
      account: { login: 'alice' },
      repositories: ['one'],
    });
    const token = await installationToken(sim, installation.id);
    await sim.deleteInstallation(installation.id);
    expect((await api(sim, 'GET', '/repos/alice/one', { authorization: `token ${token}` })).status).toBe(401);
    const gone = await api(sim, 'GET', `/app/installations/${installation.id}`, {
      authorization: `Bearer ${await appJwt(sim)}`,
    });
    expect(gone.status).toBe(404);
  });
});
