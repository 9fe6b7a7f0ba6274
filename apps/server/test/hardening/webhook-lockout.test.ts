import { createHmac, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { App } from '@octokit/app';
import { Octokit } from '@octokit/core';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { placedHookId, setUpWorld, type World } from '../support/demo-world.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';

/**
 * GitHub sends every tenant's webhooks from the same shared addresses, and anyone who administers
 * a repository can add a hook pointing at Zekt with a secret of their own — no Zekt account needed
 * — and ping it. Failed webhook signatures used to be counted per client address and checked
 * before the signature: 31 pings a minute answered every tenant's webhooks 429. Here every request
 * comes from 127.0.0.1 (the simulator and the tests alike, no `ZEKT_TRUST_PROXY`): one shared
 * address, as GitHub's are. The limit is the default, 30 a minute.
 */
const LIMIT = 30;

let h: Harness;
let world: World;
afterEach(async () => {
  await h?.close();
});

const sign = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** What the stranger (mallory, who installed the App on initech/tps) does with GitHub's own API. */
async function strangersOctokit(installationId: number) {
  const app = new App({
    appId: h.sim.app.id,
    privateKey: h.sim.app.privateKeyPem,
    Octokit: Octokit.defaults({ baseUrl: h.sim.apiUrl }),
  });
  return app.getInstallationOctokit(installationId);
}

/** Runs acme/api's workflow; its `workflow_run.completed` must be accepted and routed to globex/app. */
async function expectTenantRunRouted(version: string) {
  const run = await h.sim.runWorkflow({
    repository: 'acme/api',
    workflow: 'deploy.yml',
    message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { version } },
  });
  expect(run.webhooks.map((d) => d.status)).toEqual([202]);
  const dispatch = await eventually(() =>
    h.sim
      .dispatches({ repository: 'globex/app' })
      .find(
        (d) =>
          (d.clientPayload as { zekt: { correlationId: string } }).zekt.correlationId === String(run.run.id),
      ),
  );
  expect((dispatch.clientPayload as { zekt: { payload: unknown } }).zekt.payload).toEqual({ version });
}

describe('failed webhook signatures', () => {
  it("31 bad pings on a stranger's hook leave every tenant's webhooks, and the address's API calls, alone", async () => {
    h = await startHarness();
    world = await setUpWorld(h);
    const { installation } = await h.sim.createInstallation({
      account: { login: 'initech', type: 'Organization' },
      repositories: ['tps'],
      sender: { login: 'mallory' },
    });
    const octokit = await strangersOctokit(installation.id);
    const created = await octokit.request('POST /repos/{owner}/{repo}/hooks', {
      owner: 'initech',
      repo: 'tps',
      name: 'web',
      active: true,
      events: ['push'],
      config: { url: `${h.url}/webhooks/github`, content_type: 'json', secret: 'mallory-knows-this' },
    });
    const hookId = created.data.id;
    for (let i = 0; i <= LIMIT; i++) {
      await octokit.request('POST /repos/{owner}/{repo}/hooks/{hook_id}/pings', {
        owner: 'initech',
        repo: 'tps',
        hook_id: hookId,
      });
    }
    const pings = await eventually(() => {
      const sent = h.sim
        .webhookDeliveries()
        .filter((d) => d.hookId === hookId && d.event === 'ping' && d.status !== null);
      return sent.length === LIMIT + 2 ? sent : undefined; // the hook's creation pinged it too
    });
    // The stranger's own hook is refused (its secret is not one Zekt knows), then limited. GitHub
    // sends each ping when it has answered the call, so they may arrive out of order.
    const statuses = pings.map((d) => d.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);

    // Every tenant's webhooks still arrive: a provider's run (through the hook Zekt placed)…
    await expectTenantRunRouted('1.0.0');
    // …and an installation event through the App's webhook.
    const added = await h.sim.createInstallation({
      account: { login: 'umbrella', type: 'Organization' },
      repositories: ['labs'],
      sender: { login: 'carol' },
    });
    expect(added.delivery?.status).toBe(200);
    // The address all of this came from is not locked out of the API either.
    expect((await h.call('GET', '/api/v1/me', { token: world.providerToken })).status).toBe(200);
  });

  it("bad signatures under a tenant's own hook id lock that hook id out for bad signatures only", async () => {
    h = await startHarness();
    world = await setUpWorld(h);
    const victim = await placedHookId(h, 'acme/api', 'provider');
    const body = JSON.stringify({ zen: 'guess', hook_id: victim });
    const forged = () =>
      fetch(`${h.url}/webhooks/github`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'ping',
          'x-github-delivery': randomUUID(),
          'x-github-hook-id': String(victim),
          'x-github-hook-installation-target-type': 'repository',
          'x-github-hook-installation-target-id': '1',
          'x-hub-signature-256': sign('a-guess', body),
        },
        body,
      });
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++) statuses.push((await forged()).status);
    expect(statuses.slice(0, LIMIT).every((s) => s === 401)).toBe(true);
    const limited = await forged();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toContain('application/problem+json');
    expect(await limited.json()).toMatchObject({ code: 'rate_limited' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    // The victim's validly signed webhooks, under that very hook id and from that very address,
    // still pass: the signature is checked before any limit.
    await expectTenantRunRouted('2.0.0');
    await expectTenantRunRouted('2.0.1');
  });
});

describe('behind a proxy without ZEKT_TRUST_PROXY', () => {
  function capturingLogger() {
    const lines: Array<{ level: number; msg: string; setting?: string }> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    return { logger: pino({ level: 'warn' }, stream), lines };
  }
  const warnings = (lines: Array<{ msg: string }>) =>
    lines.filter((line) => line.msg.includes('X-Forwarded-For'));

  it('says once, at the first request with X-Forwarded-For, what to set', async () => {
    const { logger, lines } = capturingLogger();
    h = await startHarness({ logger });
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    expect(warnings(lines)).toEqual([]);
    for (const client of ['198.51.100.1', '198.51.100.2']) {
      await fetch(`${h.url}/api/v1/me`, {
        headers: { 'x-forwarded-for': client, authorization: 'Bearer zkt_wrong' },
      });
    }
    const [warning, ...more] = warnings(lines);
    expect(more).toEqual([]);
    expect(warning).toMatchObject({ level: 40, setting: 'ZEKT_TRUST_PROXY' });
    expect(warning?.msg).toContain('ZEKT_TRUST_PROXY is off');
    expect(warning?.msg).toContain('set ZEKT_TRUST_PROXY to its addresses');
    expect(warning?.msg).toContain('ZEKT_AUTH_FAILURE_LIMIT');
  });

  it('says nothing when ZEKT_TRUST_PROXY names the proxy', async () => {
    const { logger, lines } = capturingLogger();
    h = await startHarness({ logger, env: { ZEKT_TRUST_PROXY: '127.0.0.1' } });
    await fetch(`${h.url}/api/v1/me`, { headers: { 'x-forwarded-for': '198.51.100.1' } });
    expect(warnings(lines)).toEqual([]);
  });
});
