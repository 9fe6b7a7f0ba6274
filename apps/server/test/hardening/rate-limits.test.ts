import { createHmac } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../../src/domain/clock.js';
import { freePort } from '../../src/free-port.js';
import { createZekt, type Zekt } from '../../src/zekt.js';
import { setUpWorld, type World } from '../support/demo-world.js';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * Failed authentication is limited per client and per token prefix, API calls
 * per token; beyond a limit the answer is 429 with Retry-After, before any credential is checked.
 * Webhook signatures are the exception: checked first, and their failures limited per hook
 * (webhook-lockout.test.ts). The counters live in the store, so every API process of a deployment
 * counts together.
 */
const FAILURES = 5;
const CALLS = 20;
let h: Harness;
let world: World;
let clock: ManualClock;

beforeEach(async () => {
  clock = createManualClock(Date.now());
  h = await startHarness({
    clock,
    env: {
      ZEKT_AUTH_FAILURE_LIMIT: String(FAILURES),
      ZEKT_API_CALL_LIMIT: String(CALLS),
      ZEKT_TRUST_PROXY: 'true',
    },
  });
  world = await setUpWorld(h);
});
afterEach(async () => {
  await h.close();
});

const from = (ip: string) => ({ 'x-forwarded-for': ip });

async function expectLimited(response: Response) {
  expect(response.status).toBe(429);
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  expect(((await response.json()) as { code: string }).code).toBe('rate_limited');
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe('failed authentication', () => {
  it('of API tokens is limited per client; the client is refused before its credential is checked', async () => {
    const me = (token: string, ip = '198.51.100.1') =>
      fetch(`${h.url}/api/v1/me`, { headers: { authorization: `Bearer ${token}`, ...from(ip) } });
    for (let i = 0; i < FAILURES; i++)
      expect((await me(`zkt_${String(i).padStart(43, 'b')}`)).status).toBe(401);
    await expectLimited(await me('zkt_guessguessguessguessguessguessguessguessg'));
    await expectLimited(await me(world.providerToken));
    expect((await me(world.providerToken, '198.51.100.2')).status).toBe(200);
    clock.advance(61_000);
    expect((await me(world.providerToken)).status).toBe(200);
  });

  it('is limited per token prefix across clients', async () => {
    const prefix = 'zkt_AAAAAAAA';
    for (let i = 0; i < FAILURES; i++) {
      const response = await fetch(`${h.url}/api/v1/me`, {
        headers: {
          authorization: `Bearer ${prefix}${String(i).padStart(35, 'c')}`,
          ...from(`203.0.113.${i}`),
        },
      });
      expect(response.status).toBe(401);
    }
    await expectLimited(
      await fetch(`${h.url}/api/v1/me`, {
        headers: { authorization: `Bearer ${prefix}${'d'.repeat(35)}`, ...from('203.0.113.200') },
      }),
    );
  });

  it('of delivery tokens and webhook signatures is limited too', async () => {
    const confirm = () =>
      fetch(`${h.url}/api/event-delivery/confirm`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer zdt_${'e'.repeat(43)}`,
          ...from('192.0.2.7'),
        },
        body: JSON.stringify({ correlationId: '123' }),
      });
    const statuses = [];
    for (let i = 0; i <= FAILURES; i++) statuses.push((await confirm()).status);
    expect(statuses.slice(0, FAILURES).every((s) => s === 404 || s === 401)).toBe(true);
    await expectLimited(await confirm());

    const body = '{"zen":"x"}';
    const webhook = (secret: string) =>
      fetch(`${h.url}/webhooks/github`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'ping',
          'x-github-delivery': 'guess',
          'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
          ...from('192.0.2.8'),
        },
        body,
      });
    // Webhook signatures are limited per hook named (here none), never per address.
    for (let i = 0; i < FAILURES; i++) expect((await webhook(`guess-${i}`)).status).toBe(401);
    await expectLimited(await webhook('guess-last'));
    // GitHub itself, from the very same address and naming no hook either, is not affected: a
    // validly signed webhook is never refused (test/hardening/webhook-lockout.test.ts).
    const real = await fetch(`${h.url}/webhooks/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-github-delivery': 'real',
        'x-hub-signature-256': `sha256=${createHmac('sha256', h.sim.app.webhookSecret).update(body).digest('hex')}`,
        ...from('192.0.2.8'),
      },
      body,
    });
    expect(real.status).toBe(200);
  });
});

describe('API calls', () => {
  it('are limited per token', async () => {
    // A window of its own: setting up the world made calls with these tokens.
    clock.advance(60_000);
    const statuses = [];
    for (let i = 0; i <= CALLS; i++) {
      statuses.push((await h.call('GET', '/api/v1/me', { token: world.consumerToken })).status);
    }
    expect(statuses.slice(0, CALLS).every((s) => s === 200)).toBe(true);
    expect(statuses[CALLS]).toBe(429);
    expect((await h.call('GET', '/api/v1/me', { token: world.providerToken })).status).toBe(200);
    clock.advance(61_000);
    expect((await h.call('GET', '/api/v1/me', { token: world.consumerToken })).status).toBe(200);
  });
});

describe('several API processes', () => {
  let second: Zekt;
  let secondUrl: string;
  afterEach(async () => {
    await second?.stop();
  });

  it('count failures together, through the store', async () => {
    const port = await freePort();
    second = await createZekt({
      config: { ...h.config, port, host: '127.0.0.1' },
      role: 'api',
      store: h.zekt.store,
      clock,
      logger: pino({ level: 'silent' }),
    });
    secondUrl = (await second.start())!;
    for (let i = 0; i < FAILURES; i++) {
      const url = i % 2 === 0 ? h.url : secondUrl;
      const response = await fetch(`${url}/api/v1/me`, {
        headers: { authorization: `Bearer zkt_${String(i).padStart(43, 'f')}`, ...from('198.51.100.77') },
      });
      expect(response.status).toBe(401);
    }
    for (const url of [h.url, secondUrl]) {
      await expectLimited(
        await fetch(`${url}/api/v1/me`, {
          headers: { authorization: `Bearer ${world.providerToken}`, ...from('198.51.100.77') },
        }),
      );
    }
  });
});
