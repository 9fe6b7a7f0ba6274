import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { environmentForSimulator } from '@zekt/server/dist/cli/simulator-environment.js';
import { createTokenForLogin } from '@zekt/server/dist/cli/token.js';
import { createZektClient, ok } from '@zekt/server/dist/cli/zekt-client.js';
import { type Environment, loadStoreConfig } from '@zekt/server/dist/config.js';
import { freePort } from '@zekt/server/dist/free-port.js';
import { createSecretBox } from '@zekt/server/dist/security/secret-box.js';
import { openStore } from '@zekt/server/dist/store/store.js';
import { createGitHubSimulator, type DispatchRecord, type GitHubSimulator } from 'zekt-github-sim';
import { emptyBenchDatabase } from './bench-database.js';
import { stopWithBench } from './child-processes.js';
import { procStatusBytes, type ServerProcess, startServerProcess, stopChild } from './server-process.js';
import { preciseNow } from './webhook-load.js';
import { ZEKT_CLI } from './zekt-cli.js';

/**
 * The receivers `zekt bench --compare` loads side by side, each in processes of its own, each with
 * its own GitHub simulator: the ceiling (bare HMAC + 202), the naive Octokit router, and Zekt in
 * the shapes asked for. A target tells where to send webhooks, how to sign them, and when each
 * run's dispatch reached GitHub.
 */
export interface ComparisonTarget {
  name: string;
  /** Where webhooks go, and what they carry besides the body and signature. */
  url: string;
  secret: string;
  headers: Record<string, string>;
  template: Record<string, unknown>;
  /** Dispatch arrival (epoch ms) per run id, per consumer repository; empty for the ceiling. */
  arrivals: Map<string, Map<number, number>>;
  consumers: string[];
  /** The GitHub simulator the target dispatches to (null for the ceiling). */
  sim: GitHubSimulator | null;
  /** Peak resident set of the target's processes (sum; Linux `/proc`). */
  peakRssBytes(): number | null;
  /** The target's processes (their CPU time: cpu-time.ts). */
  pids(): number[];
  stop(): Promise<void>;
}

const CLI = ZEKT_CLI;
const COMPARISON_PROCESS = fileURLToPath(new URL('./comparison-process.js', import.meta.url));

export const PROVIDER = { account: 'acme', repository: 'api', user: 'alice', workflow: 'deploy.yml' };
export const EVENT_TYPE = 'acme-deployed';

/** `{ account, repo }` of each consumer; the first is the one every scenario times. */
export interface ConsumerSpec {
  account: string;
  repo: string;
  user: string;
}

export const FAST_CONSUMER: ConsumerSpec = { account: 'globex', repo: 'deployer', user: 'bob' };
export const SLOW_CONSUMER: ConsumerSpec = { account: 'initech', repo: 'reports', user: 'carol' };

/** A real `workflow_run.completed` payload (GitHub's documented example) of the provider repository. */
export async function completedRunTemplate(repository: {
  id: number;
  name: string;
  full_name: string;
  owner: { login: string; id: number };
}): Promise<Record<string, unknown>> {
  let examples: Array<{ name: string; examples: Array<Record<string, unknown>> }>;
  try {
    examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as typeof examples;
  } catch (error) {
    throw new Error(
      "zekt bench --compare sends GitHub's example payloads from @octokit/webhooks-examples: run it from the repository checkout (npm ci)",
      { cause: error },
    );
  }
  const example = examples
    .find((group) => group.name === 'workflow_run')
    ?.examples.find(
      (p) => p.action === 'completed' && typeof (p.workflow_run as { path?: unknown }).path === 'string',
    );
  if (!example) throw new Error('no workflow_run.completed example with a path');
  const payload = structuredClone(example) as {
    repository: Record<string, unknown>;
    workflow_run: Record<string, unknown>;
  };
  payload.repository = {
    ...payload.repository,
    id: repository.id,
    name: repository.name,
    full_name: repository.full_name,
    owner: {
      ...(payload.repository.owner as object),
      login: repository.owner.login,
      id: repository.owner.id,
    },
  };
  Object.assign(payload.workflow_run, {
    name: 'Deploy',
    path: `.github/workflows/${PROVIDER.workflow}`,
    run_attempt: 1,
    conclusion: 'success',
    head_branch: 'main',
  });
  return payload;
}

interface World {
  sim: GitHubSimulator;
  arrivals: Map<string, Map<number, number>>;
  provider: Awaited<ReturnType<GitHubSimulator['createInstallation']>>;
  consumers: Array<{ spec: ConsumerSpec; installationId: number }>;
}

/** A simulator whose dispatches are timed as they arrive. */
async function startSimulator(consumers: ConsumerSpec[]): Promise<Pick<World, 'sim' | 'arrivals'>> {
  const arrivals = new Map<string, Map<number, number>>();
  for (const c of consumers) arrivals.set(`${c.account}/${c.repo}`, new Map());
  const sim = await createGitHubSimulator({
    host: '127.0.0.1',
    port: 0,
    allowPrivateHookUrls: true,
    onDispatch: (dispatch: DispatchRecord) => {
      const at = preciseNow();
      const zekt = (dispatch.clientPayload as { zekt?: { correlationId?: string } } | null)?.zekt;
      arrivals.get(dispatch.repository)?.set(Number(zekt?.correlationId), at);
    },
  });
  return { sim, arrivals };
}

/** Installs the App on the provider and every consumer (GitHub sends `installation.created`). */
async function installApp(
  started: Pick<World, 'sim' | 'arrivals'>,
  consumers: ConsumerSpec[],
): Promise<World> {
  const { sim } = started;
  const provider = await sim.createInstallation({
    account: { login: PROVIDER.account, type: 'Organization' },
    repositories: [PROVIDER.repository],
    sender: { login: PROVIDER.user },
  });
  const installed = [];
  for (const spec of consumers) {
    const change = await sim.createInstallation({
      account: { login: spec.account, type: 'Organization' },
      repositories: [spec.repo],
      sender: { login: spec.user },
    });
    installed.push({ spec, installationId: change.installation.id });
  }
  return { ...started, provider, consumers: installed };
}

async function template(world: World): Promise<Record<string, unknown>> {
  const repo = world.provider.repositories[0];
  if (!repo) throw new Error('the provider installation has no repository');
  return completedRunTemplate({
    id: repo.id,
    name: repo.name,
    full_name: repo.full_name,
    owner: { login: repo.owner.login, id: repo.owner.id },
  });
}

/** Starts `node comparison-process.js <kind> <settings>` and waits for it to listen. */
async function startComparisonProcess(
  kind: 'ceiling' | 'naive' | 'bare-durable',
  settings: object,
): Promise<ChildProcess> {
  const child = stopWithBench(
    spawn(process.execPath, [COMPARISON_PROCESS, kind, JSON.stringify(settings)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').includes('listening')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}: ${stderr}`)));
  });
  child.stdout?.resume();
  return child;
}

export async function startCeiling(): Promise<ComparisonTarget> {
  const port = await freePort();
  const secret = 'bench-ceiling-secret';
  const child = await startComparisonProcess('ceiling', { port, secret });
  const repository = {
    id: 1,
    name: PROVIDER.repository,
    full_name: `${PROVIDER.account}/${PROVIDER.repository}`,
    owner: { login: PROVIDER.account, id: 2 },
  };
  return {
    name: 'ceiling: node:http, HMAC + 202',
    url: `http://127.0.0.1:${port}/webhooks/github`,
    secret,
    headers: {},
    template: await completedRunTemplate(repository),
    arrivals: new Map(),
    consumers: [],
    sim: null,
    peakRssBytes: () => procStatusBytes(child, 'VmHWM'),
    pids: () => (child.pid ? [child.pid] : []),
    stop: () => stopChild(child),
  };
}

export function startNaiveRouter(consumers: ConsumerSpec[]): Promise<ComparisonTarget> {
  return startReferenceRouter(consumers, {
    kind: 'naive',
    name: 'naive Octokit router (no persistence)',
    path: '/api/github/webhooks',
    settings: (world) => ({
      clientId: world.sim.app.clientId,
      clientSecret: world.sim.app.clientSecret,
    }),
  });
}

/** The bare durable router (bare-durable-router.ts), with a SQLite file in a directory of its own. */
export async function startBareDurableRouter(consumers: ConsumerSpec[]): Promise<ComparisonTarget> {
  const dataDir = mkdtempSync(join(tmpdir(), 'zekt-bare-durable-'));
  const cleanUp = () => rmSync(dataDir, { recursive: true, force: true });
  try {
    return await startReferenceRouter(consumers, {
      kind: 'bare-durable',
      name: 'bare durable router (SQLite, no retries)',
      path: '/webhooks/github',
      settings: () => ({ dataDir }),
      cleanUp,
    });
  } catch (error) {
    cleanUp();
    throw error;
  }
}

/**
 * A reference router in a process of its own (comparison-process.ts), installed as the simulator's
 * App on the provider and the consumers, dispatching to them: the settings every kind takes, and
 * those of its own.
 */
async function startReferenceRouter(
  consumers: ConsumerSpec[],
  router: {
    kind: 'naive' | 'bare-durable';
    name: string;
    path: string;
    settings: (world: World) => object;
    cleanUp?: () => void;
  },
): Promise<ComparisonTarget> {
  const world = await installApp(await startSimulator(consumers), consumers);
  const port = await freePort();
  const child = await startComparisonProcess(router.kind, {
    port,
    appId: world.sim.app.id,
    privateKey: world.sim.app.privateKeyPem,
    webhookSecret: world.sim.app.webhookSecret,
    apiUrl: world.sim.apiUrl,
    eventType: EVENT_TYPE,
    consumers: world.consumers.map((c) => ({
      installationId: c.installationId,
      owner: c.spec.account,
      repo: c.spec.repo,
    })),
    ...router.settings(world),
  });
  return {
    name: router.name,
    url: `http://127.0.0.1:${port}${router.path}`,
    secret: world.sim.app.webhookSecret,
    headers: {},
    template: await template(world),
    arrivals: world.arrivals,
    consumers: consumers.map((c) => `${c.account}/${c.repo}`),
    sim: world.sim,
    peakRssBytes: () => procStatusBytes(child, 'VmHWM'),
    pids: () => (child.pid ? [child.pid] : []),
    stop: async () => {
      await stopChild(child);
      await world.sim.close();
      router.cleanUp?.();
    },
  };
}

export interface ZektTarget extends ComparisonTarget {
  /** The environment of its processes (workers started later share it). */
  env: Environment;
  /** API tokens of the provider's user, and the subscription ids (one per consumer). */
  providerToken: string;
  subscriptionIds: string[];
  /** Starts worker processes (`--role worker`) beside the API process; stopped with the target. */
  addWorkers(count: number): Promise<void>;
}

export interface ZektTargetOptions {
  name: string;
  consumers: ConsumerSpec[];
  durable: boolean;
  /** A throwaway PostgreSQL database (its public schema is emptied first); unset: SQLite. */
  databaseUrl?: string | undefined;
  /**
   * `all` (the default deployment): one process with every role. `api`: the API process alone;
   * worker processes join it through `addWorkers`.
   */
  role?: 'all' | 'api';
  /** Extra settings of the zekt processes. */
  env?: Record<string, string>;
  execArgv?: string[];
  /** The first process runs under this command (server-process.ts), and may take this long to start. */
  wrapper?: readonly string[];
  startTimeoutMs?: number;
}

/**
 * Zekt as an operator runs it: `zekt serve` processes (pacing off, as allowed for
 * benchmarks) against the simulator, set up through the management API like `zekt dev` does.
 */
export async function startZekt(options: ZektTargetOptions): Promise<ZektTarget> {
  const port = await freePort();
  const zektUrl = `http://127.0.0.1:${port}`;
  const simulator = await startSimulator(options.consumers);
  simulator.sim.setAppWebhookUrl(`${zektUrl}/webhooks/github`);
  const dataDir = mkdtempSync(join(tmpdir(), 'zekt-compare-'));
  if (options.databaseUrl) await emptyBenchDatabase(options.databaseUrl);
  const env: Environment = {
    ...environmentForSimulator(simulator.sim, {
      port,
      dataDir,
      logLevel: 'info',
      ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    }),
    ZEKT_INSTALLATION_DISPATCH_RATE: '0',
    ...options.env,
  };
  const servers: ServerProcess[] = [];
  const stopAll = async () => {
    for (const server of servers.reverse()) await server.stop();
    await simulator.sim.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    servers.push(
      await startServerProcess({
        cli: CLI,
        env,
        url: zektUrl,
        role: options.role ?? 'all',
        readRequestLog: false,
        ...(options.execArgv ? { execArgv: options.execArgv } : {}),
        ...(options.wrapper ? { wrapper: options.wrapper } : {}),
        ...(options.startTimeoutMs ? { startTimeoutMs: options.startTimeoutMs } : {}),
      }),
    );
    const world = await installApp(simulator, options.consumers);
    const store = await openStore(loadStoreConfig(env));
    try {
      const seeded = await seedZekt({ zektUrl, world, store, durable: options.durable });
      const repositoryId = world.provider.repositories[0]?.id ?? 0;
      const hook = await store.db
        .selectFrom('repository_hooks')
        .selectAll()
        .where('repository_id', '=', repositoryId)
        .where('role', '=', 'provider')
        .executeTakeFirstOrThrow();
      const secret = createSecretBox(String(env.ZEKT_SECRET)).open(hook.secret_encrypted);
      const target: ZektTarget = {
        env,
        providerToken: seeded.providerToken,
        subscriptionIds: seeded.subscriptionIds,
        addWorkers: async (count) => {
          // Side by side, as an operator scaling out starts them: one after the other, the first
          // would drain the backlog alone while the second boots.
          const first = servers.length;
          const started = await Promise.allSettled(
            Array.from({ length: count }, (_, i) =>
              startServerProcess({
                cli: CLI,
                // Workers share this host: each takes a free probe port.
                env: { ...env, ZEKT_WORKER_ID: `bench-worker-${first + i}`, ZEKT_METRICS_PORT: '0' },
                url: zektUrl,
                role: 'worker',
                readRequestLog: false,
              }),
            ),
          );
          for (const result of started) if (result.status === 'fulfilled') servers.push(result.value);
          const failed = started.find((result) => result.status === 'rejected');
          if (failed) throw failed.reason;
        },
        name: options.name,
        url: `${zektUrl}/webhooks/github`,
        secret,
        headers: {
          'x-github-hook-id': String(hook.hook_id),
          'x-github-hook-installation-target-type': 'repository',
          'x-github-hook-installation-target-id': String(repositoryId),
        },
        template: await template(world),
        arrivals: world.arrivals,
        consumers: options.consumers.map((c) => `${c.account}/${c.repo}`),
        sim: world.sim,
        peakRssBytes: () => {
          const values = servers.map((s) => s.memory().peakRssBytes);
          return values.some((v) => v === null) ? null : values.reduce((a, b) => (a ?? 0) + (b ?? 0), 0);
        },
        pids: () => servers.map((s) => s.pid),
        stop: stopAll,
      };
      return target;
    } finally {
      await store.close();
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
}

async function seedZekt(input: {
  zektUrl: string;
  world: World;
  store: Awaited<ReturnType<typeof openStore>>;
  durable: boolean;
}): Promise<{ providerToken: string; subscriptionIds: string[] }> {
  const { zektUrl, world, store } = input;
  const providerRepo = `${PROVIDER.account}/${PROVIDER.repository}`;
  const providerToken = (await createTokenForLogin(store, { login: PROVIDER.user, name: 'bench' })).token;
  const asProvider = createZektClient({ baseUrl: zektUrl, token: providerToken });
  const subscriptionIds: string[] = [];
  const owner = PROVIDER.account;
  const repo = PROVIDER.repository;
  await asProvider.PUT('/api/v1/repositories/{owner}/{repo}/provider', {
    params: { path: { owner, repo } },
    body: { enabled: true },
  });
  await asProvider.PUT('/api/v1/repositories/{owner}/{repo}/workflows/{file}', {
    params: { path: { owner, repo, file: PROVIDER.workflow } },
    body: { whitelisted: true },
  });
  const service = await ok(
    asProvider.POST('/api/v1/services', {
      body: {
        repository: providerRepo,
        workflow: PROVIDER.workflow,
        slug: 'acme-deploys',
        eventType: EVENT_TYPE,
        visibility: 'public',
        published: true,
      },
    }),
  );
  for (const { spec } of world.consumers) {
    const asConsumer = createZektClient({
      baseUrl: zektUrl,
      token: (await createTokenForLogin(store, { login: spec.user, name: 'bench' })).token,
    });
    const subscription = await ok(
      asConsumer.POST('/api/v1/subscriptions', {
        body: { serviceId: service.id, deliversTo: `${spec.account}/${spec.repo}` },
      }),
    );
    subscriptionIds.push(subscription.id);
    await asProvider.POST('/api/v1/subscriptions/{id}/approve', {
      params: { path: { id: subscription.id } },
    });
    if (input.durable) {
      await asConsumer.PUT('/api/v1/repositories/{owner}/{repo}/completion-tracking', {
        params: { path: { owner: spec.account, repo: spec.repo } },
        body: { enabled: true },
      });
      await asConsumer.PATCH('/api/v1/subscriptions/{id}', {
        params: { path: { id: subscription.id } },
        body: { durable: true },
      });
    }
  }
  return { providerToken, subscriptionIds };
}
