import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../src/domain/clock.js';
import { DAY_MS, HOUR_MS } from '../src/domain/duration.js';
import { setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';
import { type HttpRecorder, startHttpRecorder } from './support/http-recorder.js';

/**
 * Settings in the API: a person's own API tokens (`/api/v1/tokens`: a name and an expiry, the
 * secret answered once, audited, scoped to its creator, refused once expired or revoked) and the
 * service checks of `zekt doctor` for members (`/api/v1/checks`: scoped, no secrets).
 */
describe('API tokens', () => {
  let h: Harness;
  let world: World;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = createManualClock(Date.now());
    h = await startHarness({ transport: 'inject', clock, env: { ZEKT_RECONCILE_INTERVAL_MS: '0' } });
    world = await setUpWorld(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  const inDays = (days: number) => new Date(clock.now() + days * DAY_MS).toISOString();
  const create = (token: string, body: unknown) => h.call('POST', '/api/v1/tokens', { token, body });

  it('creates a token that acts as its creator, shows its secret once, lists and audits it', async () => {
    const created = await create(world.providerToken, { name: 'release pipeline', expiresAt: inDays(30) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^tok_/),
      name: 'release pipeline',
      expiresAt: inDays(30),
      expired: false,
      token: expect.stringMatching(/^zkt_[A-Za-z0-9_-]{43}$/),
    });
    const me = await h.call('GET', '/api/v1/me', { token: created.body.token });
    expect(me.body.user.login).toBe('alice');
    expect(me.body.accounts.map((a: { login: string }) => a.login)).toEqual(['acme']);

    const listed = await h.call('GET', '/api/v1/tokens', { token: created.body.token });
    expect(listed.status).toBe(200);
    const mine = listed.body.tokens.find((t: { id: string }) => t.id === created.body.id);
    expect(mine).toEqual({
      id: created.body.id,
      name: 'release pipeline',
      createdAt: expect.any(String),
      expiresAt: inDays(30),
      expired: false,
      current: true,
    });
    // The secret is never answered again, by any route.
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
    // The CLI's token of the world is alice's too, listed without an expiry; bob's are not hers.
    expect(listed.body.tokens.some((t: { expiresAt: string | null }) => t.expiresAt === null)).toBe(true);
    const bobs = await h.call('GET', '/api/v1/tokens', { token: world.consumerToken });
    expect(bobs.body.tokens.map((t: { id: string }) => t.id)).not.toContain(created.body.id);

    const audit = await h.call('GET', `/api/v1/audit?action=token.create&target=${created.body.id}`, {
      token: world.providerToken,
    });
    expect(audit.body.entries).toEqual([
      expect.objectContaining({
        account: 'acme',
        actor: expect.objectContaining({ login: 'alice' }),
        action: 'token.create',
        target: { type: 'token', id: created.body.id },
        after: { login: 'alice', name: 'release pipeline', expiresAt: inDays(30) },
      }),
    ]);
  });

  it('revokes a token at once, audits it, and answers 404 for a token already revoked', async () => {
    const created = await create(world.providerToken, { name: 'to revoke', expiresAt: inDays(7) });
    const revoked = await h.call('DELETE', `/api/v1/tokens/${created.body.id}`, {
      token: world.providerToken,
    });
    expect(revoked.status).toBe(204);
    const refused = await h.call('GET', '/api/v1/me', { token: created.body.token });
    expect(refused).toMatchObject({ status: 401, body: { code: 'invalid_token' } });
    const again = await h.call('DELETE', `/api/v1/tokens/${created.body.id}`, { token: world.providerToken });
    expect(again).toMatchObject({ status: 404, body: { code: 'token_not_found' } });
    const listed = await h.call('GET', '/api/v1/tokens', { token: world.providerToken });
    expect(listed.body.tokens.map((t: { id: string }) => t.id)).not.toContain(created.body.id);
    const audit = await h.call('GET', `/api/v1/audit?action=token.revoke&target=${created.body.id}`, {
      token: world.providerToken,
    });
    expect(audit.body.entries).toHaveLength(1);
    expect(audit.body.entries[0]).toMatchObject({ before: { name: 'to revoke' }, after: { revoked: true } });
  });

  it('refuses an expired token with 401, saying it expired, and lists it as expired', async () => {
    const created = await create(world.providerToken, {
      name: 'short-lived',
      expiresAt: new Date(clock.now() + HOUR_MS).toISOString(),
    });
    expect((await h.call('GET', '/api/v1/me', { token: created.body.token })).status).toBe(200);
    clock.advance(HOUR_MS);
    const expired = await h.call('GET', '/api/v1/me', { token: created.body.token });
    expect(expired.status).toBe(401);
    expect(expired.contentType).toContain('application/problem+json');
    expect(expired.body.code).toBe('invalid_token');
    expect(expired.body.detail).toContain('expired at');
    const listed = await h.call('GET', '/api/v1/tokens', { token: world.providerToken });
    expect(listed.body.tokens.find((t: { id: string }) => t.id === created.body.id)).toMatchObject({
      expired: true,
    });
  });

  it('refuses bad input with a problem: the past, too far, not a time, names too long or blank, unknown fields', async () => {
    const cases: Array<[unknown, string, string]> = [
      [{ name: 'x', expiresAt: new Date(clock.now() - 1000).toISOString() }, 'invalid_expiry', 'in the past'],
      [{ name: 'x', expiresAt: inDays(367) }, 'invalid_expiry', '366 days'],
      [{ name: 'x', expiresAt: 'next year' }, 'invalid_expiry', 'ISO 8601'],
      [{ name: 'x'.repeat(101), expiresAt: inDays(1) }, 'invalid_request', 'name'],
      [{ name: '', expiresAt: inDays(1) }, 'invalid_request', 'name'],
      [{ name: '   ', expiresAt: inDays(1) }, 'invalid_request', 'name'],
      [{ name: 'x' }, 'invalid_request', 'expiresAt'],
      [{ name: 'x', expiresAt: inDays(1), scope: 'admin' }, 'invalid_request', 'additional properties'],
      [{ name: 'x', expiresAt: 1_900_000_000_000 }, 'invalid_request', 'expiresAt'],
    ];
    for (const [body, code, words] of cases) {
      const answer = await create(world.providerToken, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.contentType).toContain('application/problem+json');
      expect(answer.body.code, JSON.stringify(body)).toBe(code);
      expect(answer.body.detail, JSON.stringify(body)).toContain(words);
    }
    // Nothing was created by the refusals above: the 101-character name did not become a token.
    const listed = await h.call('GET', '/api/v1/tokens?limit=100', { token: world.providerToken });
    expect(listed.body.tokens.some((t: { name: string }) => t.name.length > 100)).toBe(false);
    expect(
      (await h.call('POST', '/api/v1/tokens', { body: { name: 'x', expiresAt: inDays(1) } })).status,
    ).toBe(401);
  });

  it('answers 404 for another user’s token id, and leaves that token working', async () => {
    const alices = await create(world.providerToken, { name: 'alice only', expiresAt: inDays(3) });
    const stolen = await h.call('DELETE', `/api/v1/tokens/${alices.body.id}`, { token: world.consumerToken });
    expect(stolen).toMatchObject({ status: 404, body: { code: 'token_not_found' } });
    expect((await h.call('GET', '/api/v1/me', { token: alices.body.token })).status).toBe(200);
    const unknown = await h.call('DELETE', '/api/v1/tokens/tok_nope', { token: world.providerToken });
    expect(unknown).toMatchObject({ status: 404, body: { code: 'token_not_found' } });
  });

  it('pages the list, newest first', async () => {
    const first = await h.call('GET', '/api/v1/tokens?limit=1', { token: world.providerToken });
    expect(first.body.tokens).toHaveLength(1);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await h.call(
      'GET',
      `/api/v1/tokens?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      { token: world.providerToken },
    );
    expect(second.body.tokens[0].id < first.body.tokens[0].id).toBe(true);
    const bad = await h.call('GET', '/api/v1/tokens?cursor=nope', { token: world.providerToken });
    expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_cursor' } });
  });
});

describe('service checks for members', () => {
  let h: Harness;
  let world: World;
  let alertReceiver: HttpRecorder;
  const alertPath = `/hooks/${randomBytes(8).toString('hex')}`;
  beforeAll(async () => {
    alertReceiver = await startHttpRecorder(405);
    h = await startHarness({
      transport: 'inject',
      env: {
        ZEKT_RECONCILE_INTERVAL_MS: '0',
        ZEKT_ALERT_URL: `${alertReceiver.url}${alertPath}`,
        ZEKT_ALERT_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      },
    });
    world = await setUpWorld(h);
    // The App webhook about globex's installation gets 401: globex's members see it, acme's do not.
    const bob = await h.call('GET', '/api/v1/me', { token: world.consumerToken });
    h.sim.dropWebhooks({ hookType: 'app', event: 'installation_repositories', status: 401 });
    await h.sim.addRepositories(bob.body.accounts[0].installationId, ['more']);
    await eventually(() =>
      h.sim.webhookDeliveries().some((d) => d.event === 'installation_repositories') ? true : undefined,
    );
  });
  afterAll(async () => {
    await h?.close();
    await alertReceiver?.close();
  });

  it('shows each member the service-wide checks and only their accounts’ deliveries', async () => {
    const bob = await h.call('GET', '/api/v1/checks', { token: world.consumerToken });
    expect(bob.status).toBe(200);
    const bobs = Object.fromEntries(bob.body.checks.map((c: { id: string }) => [c.id, c]));
    expect(bob.body.ok).toBe(false);
    expect(bobs.webhooks).toMatchObject({
      status: 'failed',
      summary: expect.stringContaining('GitHub gets 401 from you: the webhook secret differs'),
      fix: expect.stringContaining('GITHUB_WEBHOOK_SECRET'),
    });
    for (const id of ['configuration', 'database', 'app', 'clock', 'installations', 'oidc', 'alerts']) {
      expect(bobs[id]?.status, id).toBe('passed');
    }
    expect(bobs.installations.summary).toBe('1 installation: globex');

    const alice = await h.call('GET', '/api/v1/checks', { token: world.providerToken });
    const alices = Object.fromEntries(alice.body.checks.map((c: { id: string }) => [c.id, c]));
    expect(alice.body.ok).toBe(true);
    expect(alices.webhooks.status).toBe('passed');
    expect(alices.installations.summary).toBe('1 installation: acme');
    expect(JSON.stringify(alice.body)).not.toContain('globex');
  });

  it('names no secret: the alert URL by its origin, never the key, the webhook secret or ZEKT_SECRET', async () => {
    const answer = await h.call('GET', '/api/v1/checks', { token: world.consumerToken });
    const text = JSON.stringify(answer.body);
    expect(text).toContain(alertReceiver.url);
    expect(text).not.toContain(alertPath);
    for (const secret of [
      h.config.secret,
      h.config.github.app?.webhookSecret ?? '',
      h.config.alerts.secret ?? '',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain('PRIVATE KEY');
    // The alert URL was asked with HEAD only: no alert, signed or not, was sent to probe it.
    expect(alertReceiver.requests.length).toBeGreaterThan(0);
    expect(alertReceiver.requests.every((r) => r.method === 'HEAD')).toBe(true);
  });

  it('is for members only: 401 without a credential, 403 for a user of no account', async () => {
    const anonymous = await h.call('GET', '/api/v1/checks');
    expect(anonymous).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    const carol = await h.tokenFor('carol');
    const outsider = await h.call('GET', '/api/v1/checks', { token: carol });
    expect(outsider.status).toBe(403);
    expect(outsider.contentType).toContain('application/problem+json');
    expect(outsider.body.code).toBe('membership_required');
  });
});
