import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/harness.js';
import { type JsonBody, json } from '../support/processes.js';
import { publishAcmeDeploys, succeeding } from '../support/published-service.js';
import { ComposeProject, podman } from './compose-project.js';

/**
 * compose.yaml as shipped, on the image the Dockerfile builds: PostgreSQL, the one-shot migrate,
 * the api and a worker, with the GitHub simulator in a container of the same image standing in for
 * GitHub. The App's settings go to the containers through the environment (no setup step). A
 * durable delivery goes through the containers end to end; then the worker is SIGKILLed while it
 * dispatches, more runs complete while no worker runs, and once the worker is back every run has
 * been delivered and completed: none is lost.
 *
 * podman-compose 1.0.3 (Debian's) ignores `depends_on` conditions, so the test starts the services
 * in the order the conditions give, waiting on the same health checks.
 */
const image = process.env.ZEKT_TEST_IMAGE;
const postgresImage = process.env.ZEKT_TEST_POSTGRES_IMAGE;
if (!image || !postgresImage)
  throw new Error('run this suite with `npm run test:container`: it builds the images it needs first');

const repoRoot = resolve(import.meta.dirname, '../../../..');
const ZEKT = 'http://api:3000';
const SIM = 'http://github:3001';
const APP_ID = 4242;
// biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
const RUN_NAME = 'zekt ${{ github.event.client_payload.zekt.deliveryId }}';

let project: ComposeProject;
let zektUrl: string;
let simUrl: string;
let alice: string;
let bob: string;
// Set while a step runs, so that a failure prints the containers' logs.
let failed = true;

beforeAll(async () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const webhookSecret = randomBytes(16).toString('hex');
  const zektEnvironment = {
    // An http:// base URL inside the compose network: production mode would refuse it.
    NODE_ENV: 'development',
    ZEKT_BASE_URL: ZEKT,
    ZEKT_SECRET: randomBytes(32).toString('hex'),
    GITHUB_APP_ID: String(APP_ID),
    GITHUB_PRIVATE_KEY: pem,
    GITHUB_WEBHOOK_SECRET: webhookSecret,
    GITHUB_URL: SIM,
    GITHUB_API_URL: `${SIM}/api/v3`,
    ZEKT_OIDC_ISSUER: `${SIM}/_services/token`,
    ZEKT_API_CALL_LIMIT: '1000000',
    LOG_LEVEL: 'warn',
    // A worker killed mid-dispatch leaves leases that expire this soon, not after a minute.
    ZEKT_LEASE_MS: '4000',
    ZEKT_DISPATCH_TIMEOUT_MS: '2000',
    ZEKT_RETRY_SCHEDULE: '0ms,500ms,1s,2s,4s',
  };
  project = new ComposeProject(
    `zekt-ct-${randomBytes(3).toString('hex')}`,
    {
      services: {
        postgres: { image: postgresImage },
        migrate: { image, environment: zektEnvironment },
        api: { image, environment: zektEnvironment },
        // Left down when killed, so that runs complete while no worker runs; the test starts it again.
        worker: { image, environment: zektEnvironment, restart: 'no' },
        github: {
          image,
          hostname: 'github',
          entrypoint: ['zekt-github-sim'],
          command: [
            'serve',
            // Bound to its own name, the simulator's URLs (OIDC issuer, html_url) are the ones the
            // other containers reach it at.
            '--host',
            'github',
            '--port',
            '3001',
            '--app-id',
            String(APP_ID),
            '--private-key-path',
            '/run/zekt-test/app.pem',
            '--webhook-secret',
            webhookSecret,
            '--webhook-url',
            `${ZEKT}/webhooks/github`,
            '--allow-private-hook-urls',
          ],
          volumes: ['./app.pem:/run/zekt-test/app.pem:ro'],
          // Host ports podman picks when it starts the container: a port the test picked earlier
          // could be taken by then, and the container would not start.
          ports: ['127.0.0.1::3001'],
        },
      },
    },
    // The operator's first step: .env from .env.example (the test's settings above win over it).
    { '.env': readFileSync(join(repoRoot, '.env.example'), 'utf8'), 'app.pem': pem },
  );
  // compose.yaml publishes `${ZEKT_PORT}:3000`: `127.0.0.1::3000`, a loopback port podman picks.
  process.env.ZEKT_PORT = '127.0.0.1:';

  await project.compose('up', '-d', 'postgres', 'github');
  await project.untilHealthy('postgres', 120_000);
  simUrl = `http://${await project.publishedAddress('github', 3001)}`;
  await project.compose('up', '-d', '--no-deps', 'migrate');
  const migrate = await eventually(async () => {
    const state = await project.state('migrate');
    return state.running ? undefined : state;
  }, 120_000);
  expect(migrate.exitCode, await project.logs('migrate')).toBe(0);
  expect(await project.logs('migrate')).toMatch(/applied: 0001/);

  await project.compose('up', '-d', '--no-deps', 'api', 'worker');
  await project.untilHealthy('api', 120_000);
  await project.untilHealthy('worker', 120_000);
  zektUrl = `http://${await project.publishedAddress('api', 3000)}`;
  await eventually(async () =>
    (await json('GET', `${simUrl}/_sim/installations`)).status < 500 ? true : undefined,
  );

  for (const [account, repository, login] of [
    ['acme', 'api', 'alice'],
    ['globex', 'app', 'bob'],
  ] as const) {
    const installed = await json('POST', `${simUrl}/_sim/installations`, {
      account: { login: account, type: 'Organization' },
      repositories: [repository],
      sender: { login },
    });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    expect(installed.body.delivery.status).toBe(200);
  }
  alice = await tokenFor('alice');
  bob = await tokenFor('bob');
  const ok = succeeding((method, path, token, body) => json(method, zektUrl + path, body, token));
  const service = await publishAcmeDeploys(ok, alice, 'acme-deploys');
  const subscription = await ok('POST', '/api/v1/subscriptions', bob, {
    serviceId: service.id,
    deliversTo: 'globex/app',
  });
  await ok('POST', `/api/v1/subscriptions/${subscription.id}/approve`, alice);
  await ok('PUT', '/api/v1/repositories/globex/app/completion-tracking', bob, { enabled: true });
  await ok('PATCH', `/api/v1/subscriptions/${subscription.id}`, bob, { durable: true });
  const workflow = await json('POST', `${simUrl}/_sim/consumer-workflows`, {
    repository: 'globex/app',
    workflow: 'on-release.yml',
    types: ['released'],
    runName: RUN_NAME,
    conclusion: 'success',
    zekt: { url: ZEKT, confirm: true, complete: true, auth: 'oidc' },
  });
  expect(workflow.status).toBeLessThan(300);
  failed = false;
}, 600_000);

afterAll(async () => {
  if (!project) return;
  if (failed) {
    for (const service of ['postgres', 'migrate', 'api', 'worker', 'github']) {
      const state = await project.state(service).then(JSON.stringify, (error: Error) => error.message);
      const logs = await project.logs(service).catch((error: Error) => error.message);
      process.stderr.write(`${service}: ${state}\n${logs}\n`);
    }
  }
  await project.down();
}, 300_000);

async function tokenFor(login: string): Promise<string> {
  const out = await podman(
    'exec',
    await project.container('api'),
    'zekt',
    'token',
    'create',
    '--login',
    login,
  );
  return out.trim().split('\n').pop()!;
}

/**
 * A provider run of deploy.yml whose message step posts to Zekt from the simulator's container;
 * Zekt's api took the message and the completion webhook.
 */
async function providerRun(version: string): Promise<string> {
  const run = await json('POST', `${simUrl}/_sim/repos/acme/api/runs`, {
    workflow: 'deploy.yml',
    message: { zektUrl: ZEKT, eventType: 'released', payload: { version } },
  });
  expect(run.status, JSON.stringify(run.body)).toBe(201);
  expect(run.body.message.status).toBe(201);
  const completed = (run.body.webhooks as JsonBody[]).filter((w) => w.event === 'workflow_run');
  // 202: stored, to be routed by a worker.
  expect(completed.map((w) => w.status)).toEqual([202]);
  return String(run.body.run.id);
}

/** The repository_dispatch events the simulator accepted for globex/app. */
async function dispatches(): Promise<JsonBody[]> {
  return (await json('GET', `${simUrl}/_sim/dispatches?repository=globex/app`)).body as JsonBody[];
}

/** Every delivery record, all pages. */
async function deliveries(): Promise<JsonBody[]> {
  const all: JsonBody[] = [];
  let cursor: string | null = null;
  do {
    const page = await json(
      'GET',
      `${zektUrl}/api/v1/deliveries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      undefined,
      alice,
    );
    expect(page.status).toBe(200);
    all.push(...(page.body.deliveries as JsonBody[]));
    cursor = page.body.nextCursor ?? null;
  } while (cursor);
  return all;
}

/** Waits until every run has a Completed delivery record; returns them by run id. */
async function completedRecords(runIds: string[], timeoutMs: number): Promise<Map<string, JsonBody>> {
  return eventually(async () => {
    const records = await deliveries();
    const byRun = new Map(
      records.filter((r) => r.deliveryStatus === 'Completed').map((r) => [String(r.correlationId), r]),
    );
    return runIds.every((id) => byRun.has(id)) ? byRun : undefined;
  }, timeoutMs);
}

describe('compose.yaml on the Dockerfile image', () => {
  it('runs the image as a non-root user with the store on PostgreSQL and probes on both roles', async () => {
    failed = true;
    const api = await project.container('api');
    expect((await podman('exec', api, 'id', '-u')).trim()).not.toBe('0');
    const ready = await json('GET', `${zektUrl}/readyz`);
    expect(ready.status).toBe(200);
    const page = await fetch(`${zektUrl}/`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
    // The worker's probes answer inside its container, on ZEKT_METRICS_PORT.
    const worker = await project.container('worker');
    const metrics = await podman(
      'exec',
      worker,
      'node',
      '-e',
      "fetch('http://127.0.0.1:9464/metrics').then(async (r) => process.stdout.write(r.status + '\\n' + (await r.text())))",
    );
    expect(metrics.split('\n')[0]).toBe('200');
    expect(metrics).toContain('zekt_');
    failed = false;
  });

  it('completes a durable delivery through the containers', async () => {
    failed = true;
    const runId = await providerRun('5.0.0');
    const record = (await completedRecords([runId], 60_000)).get(runId)!;
    expect(record).toMatchObject({ deliveryStatus: 'Completed', durable: true, isFinalized: true });
    const sent = await dispatches();
    expect(sent.some((d) => d.clientPayload?.zekt?.deliveryId === record.deliveryId)).toBe(true);
    failed = false;
  });

  it('loses nothing when the worker is SIGKILLed: runs completed while it was down are delivered when it is back', async () => {
    failed = true;
    const before = await Promise.all(Array.from({ length: 10 }, (_, i) => providerRun(`6.0.${i}`)));
    // Killed as soon as it has started dispatching this batch, with some of it still in flight.
    await eventually(async () => {
      const records = await deliveries();
      return records.some((r) => before.includes(String(r.correlationId))) ? true : undefined;
    }, 60_000);
    await podman('kill', '--signal', 'KILL', await project.container('worker'));
    await eventually(async () => ((await project.state('worker')).running ? undefined : true), 30_000);
    expect((await project.state('worker')).exitCode).toBe(137);

    // No worker runs: the api still takes every message and webhook, and they wait in the store:
    // nothing else dispatches them.
    const sentBefore = (await dispatches()).length;
    const during = await Promise.all(Array.from({ length: 10 }, (_, i) => providerRun(`6.1.${i}`)));
    expect((await dispatches()).length).toBe(sentBefore);

    await podman('start', await project.container('worker'));
    const records = await completedRecords([...before, ...during], 120_000);
    for (const runId of [...before, ...during]) {
      expect(records.get(runId), `run ${runId}`).toMatchObject({
        deliveryStatus: 'Completed',
        durable: true,
      });
    }
    failed = false;
  });
});
