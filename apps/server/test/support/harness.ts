import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Logger, pino } from 'pino';
import type { GitHubSimulator, SimulatorOptions } from 'zekt-github-sim';
import { createTestSimulator } from '../../../../packages/github-sim/test/support/test-simulator.js';
import { environmentForSimulator } from '../../src/cli/simulator-environment.js';
import { createTokenForLogin } from '../../src/cli/token.js';
import { createZektClient, type ZektClient } from '../../src/cli/zekt-client.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { Clock } from '../../src/domain/clock.js';
import { freePort } from '../../src/free-port.js';
import { createZekt, type Zekt } from '../../src/zekt.js';
import { injectFetch } from './inject-fetch.js';
import { copyMigratedSqlite, createMigratedTestDatabase, TEST_STORE } from './test-database.js';

export { freePort } from '../../src/free-port.js';

/** What `withoutApp` leaves out of the simulator's environment. */
export const APP_SETTINGS = [
  'GITHUB_APP_ID',
  'GITHUB_PRIVATE_KEY',
  'GITHUB_WEBHOOK_SECRET',
  'GITHUB_CLIENT_ID',
  'GITHUB_CLIENT_SECRET',
];

export interface Harness {
  sim: GitHubSimulator;
  zekt: Zekt;
  url: string;
  /** The configuration the service was built from (a second server on the same store starts from it). */
  config: Config;
  /** Signs in as a GitHub login: an API token for it (memberships come from installations). */
  tokenFor(login: string): Promise<string>;
  /** Calls the Zekt API; returns status, content type and parsed body. */
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<ApiResponse>;
  /**
   * The typed API client (the CLI's) as `token`, over the same transport as `call`; for setting
   * a world up, where an error answer should throw rather than be asserted on.
   */
  client(token?: string): ZektClient;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  contentType: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies field by field.
  body: any;
}

export interface HarnessOptions {
  clock?: Clock;
  messageGraceMs?: number;
  sim?: SimulatorOptions;
  /** Start the router and dispatcher loops (default true); tests that drive them by hand pass false. */
  workers?: boolean;
  /** More configuration (ZEKT_RETRY_SCHEDULE, ZEKT_DISPATCH_TIMEOUT_MS, …). */
  env?: Record<string, string>;
  /**
   * Leave the GitHub App's settings out (GITHUB_APP_ID and the others): the service starts in setup
   * mode, and the App is registered through setup from the simulator.
   */
  withoutApp?: boolean;
  /** Changes the PostgreSQL URL the service uses (to route it through a proxy). */
  rewriteDatabaseUrl?: (url: string) => string;
  /** Where the service logs (default: silent, or ZEKT_TEST_LOG's level). */
  logger?: Logger;
  /**
   * How `call` reaches the API: `'socket'` (default) over loopback HTTP like any client, or
   * `'inject'` through Fastify's `inject()`, the same routes, hooks and serialisation without a
   * socket, for suites about what the API answers rather than how HTTP carries it. The service
   * listens either way (the simulator's webhooks arrive over the socket).
   */
  transport?: 'socket' | 'inject';
}

/**
 * The real service on a loopback port with a real SQLite file, wired to a real simulator; only the
 * processes are shared (end-to-end tests start separate ones).
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  // One App key and one OIDC key per test process (test-simulator.ts): no test tells one
  // harness's keys from another's; a test that needs keys of its own passes them in `sim`.
  const sim = await createTestSimulator({ allowPrivateHookUrls: true, ...options.sim });
  const dir = mkdtempSync(join(tmpdir(), 'zekt-it-'));
  const database = TEST_STORE === 'postgres' ? await createMigratedTestDatabase() : null;
  if (!database) await copyMigratedSqlite(join(dir, 'zekt.db'));
  // The service must know its URL before it listens (hook URLs, the OAuth callback), so its port is
  // picked first; another test process may take that port before the service binds it. Then the
  // service is stopped and started again on another, a few times.
  let started: { zekt: Zekt; config: Config; url: string } | undefined;
  for (let attempt = 1; !started; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env: Record<string, string | undefined> = {
      ...environmentForSimulator(sim, {
        port,
        dataDir: dir,
        logLevel: 'silent',
        nodeEnv: 'test',
        ...(database ? { databaseUrl: options.rewriteDatabaseUrl?.(database.url) ?? database.url } : {}),
      }),
      ZEKT_MESSAGE_GRACE_MS: String(options.messageGraceMs ?? 0),
      ZEKT_POLL_INTERVAL_MS: '200',
      // Tests poll the API as fast as they can; the per-token limit has tests of its own.
      ZEKT_API_CALL_LIMIT: '1000000',
      ...options.env,
    };
    if (options.withoutApp) {
      for (const name of APP_SETTINGS) delete env[name];
    }
    const config = loadConfig(env);
    const candidate = await createZekt({
      config,
      role: options.workers === false ? 'api' : 'all',
      logger: options.logger ?? pino({ level: process.env.ZEKT_TEST_LOG ?? 'silent' }),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    try {
      await candidate.start();
      started = { zekt: candidate, config, url };
    } catch (error) {
      await candidate.stop();
      if (attempt >= 5 || !portTaken(error)) throw error;
    }
  }
  const { zekt, config, url } = started;
  sim.setAppWebhookUrl(`${url}/webhooks/github`);

  const call: Harness['call'] = async (method, path, callOptions = {}) => {
    const headers = {
      ...(callOptions.token ? { authorization: `Bearer ${callOptions.token}` } : {}),
      ...(callOptions.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...callOptions.headers,
    };
    const payload = callOptions.body === undefined ? undefined : JSON.stringify(callOptions.body);
    if (options.transport === 'inject') {
      const response = await zekt.http.inject({
        method: method as 'GET',
        url: path,
        // The Host a loopback client would send, so nothing the service derives from it differs.
        headers: { host: new URL(url).host, ...headers },
        ...(payload === undefined ? {} : { payload }),
      });
      const contentType = response.headers['content-type'];
      return {
        status: response.statusCode,
        contentType: typeof contentType === 'string' ? contentType : '',
        body: parseBody(response.body),
      };
    }
    const response = await fetch(url + path, {
      method,
      headers,
      ...(payload === undefined ? {} : { body: payload }),
    });
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      body: parseBody(await response.text()),
    };
  };

  return {
    sim,
    zekt,
    url,
    config,
    tokenFor: async (login) => (await createTokenForLogin(zekt.store, { login })).token,
    call,
    client: (token) =>
      createZektClient({
        baseUrl: url,
        ...(token === undefined ? {} : { token }),
        ...(options.transport === 'inject' ? { fetch: injectFetch(zekt.http, new URL(url).host) } : {}),
      }),
    async close() {
      await zekt.stop();
      await sim.close();
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text; // not JSON: keep the text
  }
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Whether a start failed because its port was taken meanwhile (listen.ts keeps the cause). */
function portTaken(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return cause?.code === 'EADDRINUSE';
}
