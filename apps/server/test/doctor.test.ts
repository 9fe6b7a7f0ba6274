import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environmentForSimulator } from '../src/cli/simulator-environment.js';
import { setUpWorld } from './support/demo-world.js';
import { freePort, type Harness, startHarness } from './support/harness.js';
import { startHttpRecorder } from './support/http-recorder.js';
import { operatorEnvironment } from './support/operator-environment.js';
import { SERVICE_CHECK_TITLES } from './support/service-check-titles.js';
import { TEST_STORE } from './support/test-database.js';

/**
 * `zekt doctor`, the built command, run by an operator against a running Zekt's store and App: ✔
 * when everything works, and each check failing on its own, caused for real (a wrong key, a
 * webhook secret that differs, a webhook URL nobody answers at, a clock that is off) or by the
 * simulator's faults. Exit code 1 on any ✘.
 */
const cli = resolve(import.meta.dirname, '../dist/cli/main.js');
const run = promisify(execFile);

type Check = { id: string; status: string; summary: string; fix: string | null };

/** The environment `zekt serve` of the harness runs with, changed by `overrides` (undefined removes). */
function environmentOf(h: Harness, overrides: Record<string, string | undefined>): Record<string, string> {
  const database = h.config.database;
  const env: Record<string, string | undefined> = {
    ...operatorEnvironment(),
    ...environmentForSimulator(h.sim, {
      port: h.config.port,
      dataDir: database.kind === 'sqlite' ? dirname(database.path) : '/nonexistent',
      nodeEnv: 'test',
      ...(database.kind === 'postgres' ? { databaseUrl: database.url } : {}),
    }),
    ...overrides,
  };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

async function doctor(h: Harness, overrides: Record<string, string | undefined> = {}, json = true) {
  const result = await run(process.execPath, [cli, 'doctor', ...(json ? ['--json'] : [])], {
    env: environmentOf(h, overrides),
  }).then(
    (done) => ({ code: 0, ...done }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  expect(result.stderr).toBe('');
  if (!json) return { code: result.code, text: result.stdout, checks: {} as Record<string, Check> };
  const body = JSON.parse(result.stdout) as { ok: boolean; checks: Check[] };
  expect(body.ok).toBe(result.code === 0);
  return {
    code: result.code,
    text: result.stdout,
    checks: Object.fromEntries(body.checks.map((check) => [check.id, check])),
  };
}

/** A port nobody listens on (free a moment ago). */
const closedPort = freePort;

describe('zekt doctor on a working service', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { ZEKT_RECONCILE_INTERVAL_MS: '0' } });
    await setUpWorld(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('passes every check, printing ✔ and the finding of each, exit 0', async () => {
    const result = await doctor(h, {}, false);
    expect(result.code).toBe(0);
    const lines = result.text.trim().split('\n');
    for (const title of SERVICE_CHECK_TITLES) {
      expect(lines.find((line) => line.includes(title))).toMatch(/^✔ /);
    }
    expect(lines.at(-1)).toBe('no check failed');
    const json = await doctor(h);
    expect(json.code).toBe(0);
    expect(json.checks.installations?.summary).toBe('2 installations: acme, globex');
    expect(json.checks.app?.summary).toContain(`GitHub accepts App ${h.sim.app.id}`);
  });

  it('fails the configuration, listing every problem, and skips what needs it; the store is still checked', async () => {
    const result = await doctor(h, { ZEKT_SECRET: undefined, ZEKT_RETRY_SCHEDULE: 'soon' });
    expect(result.code).toBe(1);
    expect(result.checks.configuration?.status).toBe('failed');
    expect(result.checks.configuration?.summary).toContain('ZEKT_SECRET is required');
    expect(result.checks.configuration?.summary).toContain('ZEKT_RETRY_SCHEDULE');
    expect(result.checks.database?.status).toBe('passed');
    for (const id of ['app', 'clock', 'webhooks', 'installations', 'oidc', 'alerts']) {
      expect(result.checks[id]?.status, id).toBe('skipped');
    }
  });

  it('fails a store that does not exist, without creating one', async () => {
    if (TEST_STORE === 'sqlite') {
      const empty = mkdtempSync(join(tmpdir(), 'zekt-doctor-'));
      try {
        const result = await doctor(h, { ZEKT_DATA_DIR: empty });
        expect(result.code).toBe(1);
        expect(result.checks.database?.summary).toContain(
          `there is no Zekt store at ${join(empty, 'zekt.db')}`,
        );
        expect(result.checks.database?.fix).toContain('ZEKT_DATA_DIR');
        expect(result.checks.database?.fix).toContain('DATABASE_URL');
        expect(readdirSync(empty)).toEqual([]);
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
    } else {
      const missing = `zekt_missing_${randomBytes(4).toString('hex')}`;
      const url = new URL(h.config.database.kind === 'postgres' ? h.config.database.url : '');
      url.pathname = `/${missing}`;
      const result = await doctor(h, { DATABASE_URL: url.toString() });
      expect(result.code).toBe(1);
      expect(result.checks.database?.summary).toContain(`the database "${missing}" does not exist`);
      expect(result.checks.database?.fix).toContain(`createdb -h ${url.hostname} -p ${url.port}`);
    }
  });

  it('names GITHUB_PRIVATE_KEY for a valid RSA key that is not the App’s, and still reads the clock', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const result = await doctor(h, {
      GITHUB_PRIVATE_KEY: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    });
    expect(result.code).toBe(1);
    expect(result.checks.app).toMatchObject({
      status: 'failed',
      summary: expect.stringContaining(`GITHUB_PRIVATE_KEY is not a private key of App ${h.sim.app.id}`),
    });
    expect(result.checks.app?.summary).toContain('A JSON web token could not be decoded');
    expect(result.checks.clock?.status).toBe('passed');
    expect(result.checks.webhooks?.status).toBe('skipped');
    expect(result.checks.installations?.status).toBe('skipped');
    const text = await doctor(
      h,
      { GITHUB_PRIVATE_KEY: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString() },
      false,
    );
    expect(text.text).toMatch(/^✘ GitHub App credentials +GitHub refuses the App's key/m);
    expect(text.text).toMatch(/^ +fix: generate a private key on the App's settings page/m);
  });

  it('names GITHUB_APP_ID for an App GitHub does not know', async () => {
    const result = await doctor(h, { GITHUB_APP_ID: '987654' });
    expect(result.code).toBe(1);
    expect(result.checks.app?.summary).toContain('GitHub knows no App 987654: GITHUB_APP_ID is wrong');
  });

  it('fails the App check when GitHub cannot be reached, and skips the clock', async () => {
    const port = await closedPort();
    const result = await doctor(h, { GITHUB_API_URL: `http://127.0.0.1:${port}/api/v3` });
    expect(result.code).toBe(1);
    expect(result.checks.app?.summary).toContain(`cannot reach GitHub at http://127.0.0.1:${port}/api/v3`);
    expect(result.checks.app?.fix).toContain('GITHUB_API_URL');
    expect(result.checks.clock).toMatchObject({ status: 'skipped', summary: 'GitHub did not answer' });
  });

  it('fails the webhook check when GitHub will not list the deliveries (a fault)', async () => {
    const fault = h.sim.injectFaults({
      path: '/app/hook/deliveries',
      faults: [{ kind: 'status', status: 502 }],
    });
    try {
      const result = await doctor(h);
      expect(result.code).toBe(1);
      expect(result.checks.webhooks?.summary).toContain(
        "cannot list the App webhook's deliveries: GitHub answered 502",
      );
    } finally {
      h.sim.clearFaults(fault.id);
    }
  });

  it('fails an issuer that publishes no discovery document', async () => {
    const result = await doctor(h, { ZEKT_OIDC_ISSUER: `${h.sim.url}/not-an-issuer` });
    expect(result.code).toBe(1);
    expect(result.checks.oidc?.summary).toContain(
      `${h.sim.url}/not-an-issuer/.well-known/openid-configuration answered 404`,
    );
    expect(result.checks.oidc?.fix).toContain('ZEKT_OIDC_ISSUER');
  });

  it('probes the alert URL with HEAD only: a receiver that answers passes, none or a 404 fails', async () => {
    const receiver = await startHttpRecorder(405);
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    try {
      const answering = await doctor(h, {
        ZEKT_ALERT_URL: `${receiver.url}/alerts`,
        ZEKT_ALERT_SECRET: secret,
      });
      expect(answering.checks.alerts).toMatchObject({ status: 'passed' });
      receiver.answer(404);
      const notFound = await doctor(h, {
        ZEKT_ALERT_URL: `${receiver.url}/alerts`,
        ZEKT_ALERT_SECRET: secret,
      });
      expect(notFound.checks.alerts).toMatchObject({
        status: 'failed',
        fix: 'check the path of ZEKT_ALERT_URL',
      });
      expect(receiver.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['HEAD /alerts', 'HEAD /alerts']);
    } finally {
      await receiver.close();
    }
    const port = await closedPort();
    const nobody = await doctor(h, {
      ZEKT_ALERT_URL: `http://127.0.0.1:${port}/alerts`,
      ZEKT_ALERT_SECRET: secret,
    });
    expect(nobody.code).toBe(1);
    expect(nobody.checks.alerts?.summary).toContain(`cannot reach http://127.0.0.1:${port}`);
  });

  // Last: it breaks the App webhook's way to Zekt.
  it('says GitHub cannot reach the App webhook URL, and that an installation it missed is unrecorded', async () => {
    const port = await closedPort();
    const unreachable = `http://127.0.0.1:${port}/webhooks/github`;
    h.sim.setAppWebhookUrl(unreachable);
    await h.sim.createInstallation({
      account: { login: 'initech' },
      repositories: ['r'],
      sender: { login: 'carol' },
    });
    const result = await doctor(h);
    expect(result.code).toBe(1);
    expect(result.checks.webhooks?.summary).toContain(
      `GitHub cannot reach ${unreachable} (failed to connect)`,
    );
    expect(result.checks.webhooks?.fix).toContain(`Zekt receives webhooks at ${h.url}/webhooks/github`);
    expect(result.checks.installations?.summary).toContain(
      'GitHub lists installations Zekt has not recorded (initech)',
    );
  });
});

describe('zekt doctor against a service GitHub sees differently', () => {
  it('says GitHub gets 401 when Zekt’s webhook secret differs from the App’s', async () => {
    const h = await startHarness({
      env: { GITHUB_WEBHOOK_SECRET: 'not-the-apps-secret', ZEKT_RECONCILE_INTERVAL_MS: '0' },
    });
    try {
      await h.sim.createInstallation({
        account: { login: 'acme' },
        repositories: ['api'],
        sender: { login: 'alice' },
      });
      const result = await doctor(h, { GITHUB_WEBHOOK_SECRET: 'not-the-apps-secret' });
      expect(result.code).toBe(1);
      expect(result.checks.webhooks).toMatchObject({
        status: 'failed',
        summary: expect.stringContaining('GitHub gets 401 from you: the webhook secret differs'),
        fix: expect.stringContaining('GITHUB_WEBHOOK_SECRET'),
      });
    } finally {
      await h.close();
    }
  });

  it('fails a clock 5 minutes behind GitHub’s, and an App installed nowhere', async () => {
    const h = await startHarness({
      sim: { clock: { now: () => new Date(Date.now() + 5 * 60_000) } },
      env: { ZEKT_RECONCILE_INTERVAL_MS: '0' },
    });
    try {
      const result = await doctor(h);
      expect(result.code).toBe(1);
      expect(result.checks.app?.status).toBe('passed');
      expect(result.checks.clock?.status).toBe('failed');
      expect(result.checks.clock?.summary).toMatch(/this machine's clock is (299|30\d) s behind GitHub's/);
      expect(result.checks.clock?.fix).toContain('NTP');
      expect(result.checks.installations).toMatchObject({
        status: 'failed',
        summary: 'the App is installed on no account',
        fix: expect.stringContaining(`${h.sim.url}/apps/`),
      });
    } finally {
      await h.close();
    }
  });
});
