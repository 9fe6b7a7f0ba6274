import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/harness.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { type JsonBody, json, outputTail, ProcessGroup, serverCli } from './support/processes.js';
import { setUpRemoteWorld } from './support/remote-world.js';
import { registerAppThroughSetup } from './support/setup-flow.js';
import { TEST_STORE } from './support/test-database.js';

/**
 * Setup mode across processes: `zekt serve` processes started without a GitHub App use the App
 * registered through one of them, without a restart. On PostgreSQL an API process takes the
 * registration and webhooks while a worker process, started before the App existed, routes and
 * dispatches as that App; on SQLite one process does both. `zekt setup`, a process of its own,
 * prints the URL the server printed.
 */
const processes = new ProcessGroup();
let stack: ProcessStack;
let setupUrl: string;
let workerUrl: string | null = null;
/** The processes that route and dispatch: the worker on PostgreSQL, the one process on SQLite. */
const dispatchers: ChildProcess[] = [];

const split = TEST_STORE === 'postgres';

/** Runs a `zekt` command; its exit code and output. */
async function zektCommand(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child: ChildProcess = processes.start([serverCli, ...args], stack.zektEnv);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  return { code, stdout, stderr };
}

beforeAll(async () => {
  stack = await prepareProcessStack(processes, {
    name: 'setup-processes',
    withoutApp: true,
    env: { ZEKT_POLL_INTERVAL_MS: '200' },
  });
  const api = await processes.startZektInSetupMode(stack.zektEnv, split ? ['--role', 'api'] : []);
  setupUrl = api.setupUrl;
  if (split) {
    const worker = await processes.startProbedWorker(stack.zektEnv);
    workerUrl = worker.url;
    dispatchers.push(worker.child);
  } else {
    dispatchers.push(api.child);
  }
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe(`setup mode across processes (${TEST_STORE})`, () => {
  it('waits in setup mode, and `zekt setup` prints the URL the server printed', async () => {
    for (const url of [stack.zektUrl, workerUrl].filter((u): u is string => u !== null)) {
      const ready = await json('GET', `${url}/readyz`);
      expect(ready.status, url).toBe(503);
      expect(ready.body.code).toBe('setup_required');
    }
    const printed = await zektCommand(['setup']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toBe(`${setupUrl}\n`);
  });

  it('uses the App registered through setup in every process, without a restart: a delivery', async () => {
    await registerAppThroughSetup({
      zektUrl: stack.zektUrl,
      simUrl: stack.sim.url,
      setupUrl,
      login: 'alice',
    });
    // The registering process uses the App at once. The worker is not probed before its delivery:
    // a probe reads the store, and the dispatch must find the App on its own.
    expect((await json('GET', `${stack.zektUrl}/readyz`)).status).toBe(200);
    // Installing the App sends its webhooks, signed with its own secret, to the API process.
    const world = await setUpRemoteWorld({
      processes,
      sim: stack.sim,
      zektUrl: stack.zektUrl,
      zektEnv: stack.zektEnv,
      workflow: 'deploy.yml',
      app: 'zekt-test',
    });
    expect(world.subscriptionId).toBeTruthy();
    const apps = (await json('GET', `${stack.sim.url}/_sim/apps`)).body as JsonBody[];
    const registered = apps.find((app) => app.slug === 'zekt-test')!;

    const run = await json('POST', `${stack.sim.url}/_sim/repos/acme/api/runs`, {
      workflow: 'deploy.yml',
      message: { zektUrl: stack.zektUrl, eventType: 'zekt-workflow-completed', payload: { n: 1 } },
    });
    expect(run.status).toBe(201);
    // Routed and dispatched by the worker (the API process does neither), as the registered App.
    const dispatch = await eventually(async () => {
      const found = (await json('GET', `${stack.sim.url}/_sim/dispatches?repository=globex/app`)).body;
      return (found as JsonBody[])[0];
    }, 20_000).catch(async (error: Error) => {
      // Say what the service saw: the delivery's state and the dispatching process's last lines.
      const deliveries = await json('GET', `${stack.zektUrl}/api/v1/deliveries`, undefined, world.bob);
      const log = dispatchers.map((child) => outputTail(child)).join('\n');
      throw new Error(`${error.message}; deliveries: ${JSON.stringify(deliveries.body)}; log:\n${log}`);
    });
    const tokens = (await json('GET', `${stack.sim.url}/_sim/journal`)).body as JsonBody[];
    const tokenRequest = tokens.find(
      (entry) =>
        entry.path === `/api/v3/app/installations/${dispatch.installationId}/access_tokens` &&
        entry.status === 201,
    );
    expect(tokenRequest?.auth).toEqual({ kind: 'app', appId: registered.id });
    expect(dispatch.clientPayload.zekt.payload).toEqual({ n: 1 });

    if (workerUrl !== null) expect((await json('GET', `${workerUrl}/readyz`)).status).toBe(200);

    const closed = await zektCommand(['setup']);
    expect(closed.code).toBe(1);
    expect(closed.stderr).toContain('was registered through setup; setup is closed');
  });
});
