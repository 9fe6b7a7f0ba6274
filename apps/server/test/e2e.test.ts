import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environmentForSimulator } from '../src/cli/simulator-environment.js';
import { completedWorkflowRunExample } from '../src/test-support/github-examples.js';
import { eventually, freePort } from '../src/test-support/harness.js';

/**
 * End to end, as deployed: the built `zekt serve` and the built `zekt-github-sim` run as separate
 * processes and talk over loopback HTTP only. The completion webhook is GitHub's own documented
 * `workflow_run.completed` example, delivered by the simulator through the hook Zekt placed.
 */
const repoRoot = resolve(import.meta.dirname, '../../..');
const serverCli = join(repoRoot, 'apps/server/dist/cli/main.js');
const simCli = join(repoRoot, 'packages/github-sim/dist/cli.js');

interface SimInfo {
  url: string;
  apiUrl: string;
  oidcIssuer: string;
  app: { id: number; privateKeyPem: string; webhookSecret: string };
}

const children: ChildProcess[] = [];
let dataDir: string;
let sim: SimInfo;
let zektUrl: string;
let zektEnv: Record<string, string>;

function start(args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  child.on('exit', (code) => {
    if (code !== 0 && code !== null) process.stderr.write(`${args[0]} exited ${code}: ${stderr}\n`);
  });
  return child;
}

async function run(args: string[], env: Record<string, string>): Promise<string> {
  const child = start(args, env);
  let stdout = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}`);
  return stdout;
}

async function json(method: string, url: string, body?: unknown, token?: string) {
  const response = await fetch(url, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: responses are checked field by field below.
  return { status: response.status, body: (text ? JSON.parse(text) : null) as any };
}

beforeAll(async () => {
  for (const built of [serverCli, simCli]) {
    if (!existsSync(built))
      throw new Error(`${built} is missing: run \`npm run build\` (npm test does) first`);
  }
  dataDir = mkdtempSync(join(tmpdir(), 'zekt-e2e-'));
  const simProcess = start([simCli, 'serve', '--port', '0', '--allow-private-hook-urls']);
  const firstLine = await new Promise<string>((done, fail) => {
    createInterface({ input: simProcess.stdout! }).once('line', done);
    simProcess.once('exit', (code) => fail(new Error(`the simulator exited with ${code}`)));
  });
  sim = JSON.parse(firstLine) as SimInfo;

  const port = await freePort();
  zektUrl = `http://127.0.0.1:${port}`;
  zektEnv = environmentForSimulator(sim, { port, dataDir, nodeEnv: 'test' }) as Record<string, string>;
  start([serverCli, 'serve'], zektEnv);
  await eventually(async () => {
    try {
      return (await fetch(`${zektUrl}/readyz`)).ok ? true : undefined;
    } catch {
      return undefined;
    }
  }, 20_000);
  expect(
    (await json('PUT', `${sim.url}/_sim/app/webhook`, { url: `${zektUrl}/webhooks/github` })).status,
  ).toBe(200);
}, 60_000);

afterAll(async () => {
  await Promise.all(
    children
      .filter((child) => child.exitCode === null)
      .map(
        (child) =>
          new Promise((done) => {
            child.once('exit', done);
            child.kill('SIGTERM');
          }),
      ),
  );
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('end to end: separate processes', () => {
  it('routes a real workflow_run.completed and its message to the consumer as SPEC section 4 says', async () => {
    // GitHub installs the App on both organisations (installation.created reaches Zekt).
    const provider = await json('POST', `${sim.url}/_sim/installations`, {
      account: { login: 'acme', type: 'Organization' },
      repositories: ['api'],
      sender: { login: 'alice' },
    });
    expect(provider.status).toBe(201);
    expect(provider.body.delivery.status).toBe(200);
    const apiRepository = provider.body.repositories[0];
    await json('POST', `${sim.url}/_sim/installations`, {
      account: { login: 'globex', type: 'Organization' },
      repositories: ['app'],
      sender: { login: 'bob' },
    });

    // Operators hand out API tokens with the CLI, against the same store.
    const tokenOf = async (login: string) =>
      (await run([serverCli, 'token', 'create', '--login', login], zektEnv)).trim().split('\n').pop()!;
    const alice = await tokenOf('alice');
    const bob = await tokenOf('bob');

    const example = completedWorkflowRunExample();
    // biome-ignore lint/suspicious/noExplicitAny: GitHub's example payload is read field by field.
    const exampleRun = example.workflow_run as Record<string, any>;
    const workflowFile = String(exampleRun.path).split('/').pop()!;
    const ok = async (method: string, path: string, token: string, body?: unknown) => {
      const response = await json(method, zektUrl + path, body, token);
      expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
      return response.body;
    };
    await ok('PUT', '/api/v1/repositories/acme/api/provider', alice, { enabled: true });
    await ok('PUT', `/api/v1/repositories/acme/api/workflows/${workflowFile}`, alice, { whitelisted: true });
    const service = await ok('POST', '/api/v1/services', alice, {
      repository: 'acme/api',
      workflow: workflowFile,
      slug: 'acme-tests',
      published: true,
    });
    const subscription = await ok('POST', '/api/v1/subscriptions', bob, {
      serviceId: service.id,
      deliversTo: 'globex/app',
    });
    await ok('POST', `/api/v1/subscriptions/${subscription.id}/approve`, alice);

    // The run's message step: an Actions OIDC token for the run, then the action's request.
    const runId = 5_000_000_000 + Math.floor(Math.random() * 1_000_000);
    const oidc = await json('POST', `${sim.url}/_sim/oidc/token`, {
      repository: 'acme/api',
      workflow: workflowFile,
      runId,
    });
    expect(oidc.status).toBe(200);
    const message = {
      version: '2.0.0',
      artifacts: [{ name: 'app.tar.gz', sha256: 'ab'.repeat(32) }],
      notes: 'ünïcödé ✓',
    };
    const sent = await fetch(`${zektUrl}/api/events/receive`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${oidc.body.token}`,
        'content-type': 'application/json',
        'x-github-repository': 'acme/api',
      },
      body: JSON.stringify({
        eventType: 'tests-passed',
        payload: JSON.stringify(message),
        repository: 'acme/api',
        workflowRunId: String(runId),
      }),
    });
    expect(sent.status).toBe(201);
    expect(await sent.json()).toMatchObject({ success: true, consumersNotified: 1 });

    // GitHub's example payload, moved into the simulated repository and run.
    const payload = {
      ...example,
      repository: apiRepository,
      workflow_run: { ...exampleRun, id: runId, repository: apiRepository, head_repository: apiRepository },
    };
    const webhook = await json('POST', `${sim.url}/_sim/repos/acme/api/webhooks`, {
      event: 'workflow_run',
      payload,
    });
    expect(webhook.status).toBe(200);
    expect(webhook.body.map((d: { status: number }) => d.status)).toEqual([202]);

    const dispatch = await eventually(async () => {
      const list = (await json('GET', `${sim.url}/_sim/dispatches?repository=globex/app`)).body as unknown[];
      // biome-ignore lint/suspicious/noExplicitAny: the recorded dispatch is checked field by field.
      return list[0] as Record<string, any> | undefined;
    });
    expect(dispatch.repository).toBe('globex/app');
    expect(dispatch.eventType).toBe('tests-passed');
    expect(Object.keys(dispatch.clientPayload)).toEqual(['zekt']);
    const zekt = dispatch.clientPayload.zekt;
    expect(Object.keys(zekt).sort()).toEqual([
      'correlationId',
      'deliveryId',
      'durable',
      'event',
      'isReplay',
      'payload',
      'retry',
      'version',
    ]);
    expect(zekt.version).toBe(1);
    expect(zekt.correlationId).toBe(String(runId));
    expect(zekt.deliveryId).toMatch(
      /^delivery-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
    expect(zekt.durable).toBe(false);
    expect(zekt.isReplay).toBe(false);
    expect(zekt.retry).toBe(0);
    expect(zekt.payload).toEqual(message);
    expect(zekt.event).toEqual({
      repository: 'acme/api',
      workflow: exampleRun.name,
      workflowPath: exampleRun.path,
      runId: String(runId),
      runAttempt: exampleRun.run_attempt,
      runNumber: exampleRun.run_number,
      conclusion: exampleRun.conclusion,
      headBranch: exampleRun.head_branch,
      headSha: exampleRun.head_sha,
      actor: exampleRun.actor.login,
      htmlUrl: exampleRun.html_url,
      completedAt: exampleRun.updated_at,
    });

    // GitHub saw the App mint an installation token for globex before the dispatch.
    const journal = (await json('GET', `${sim.url}/_sim/journal`)).body as Array<{
      method: string;
      path: string;
      status: number;
    }>;
    const calls = journal.map((e) => `${e.method} ${e.path} ${e.status}`);
    const token = calls.findIndex((c) =>
      /^POST \/api\/v3\/app\/installations\/\d+\/access_tokens 201$/.test(c),
    );
    const dispatched = calls.indexOf('POST /api/v3/repos/globex/app/dispatches 204');
    expect(token).toBeGreaterThanOrEqual(0);
    expect(dispatched).toBeGreaterThan(token);
  });
});
