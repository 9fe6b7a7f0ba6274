import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { environmentForSimulator } from '../src/cli/simulator-environment.js';
import { eventually, freePort } from './support/harness.js';
import { ProcessGroup, type SimProcessInfo, serverCli } from './support/processes.js';
import { createMigratedTestDatabase, TEST_STORE, type TestDatabase } from './support/test-database.js';

/**
 * The start-up checks of `zekt serve`, as an operator meets them: real processes, the simulator as
 * GitHub. A key or App id GitHub refuses stops a production server with one line naming the
 * setting (exit 2); elsewhere the server starts and `/readyz` says why it is not ready. GitHub
 * not answering is not the operator's mistake: the server starts. A port in use is one line naming
 * PORT or ZEKT_METRICS_PORT. Never a stack trace.
 */
const processes = new ProcessGroup();
let sim: SimProcessInfo;
let database: TestDatabase | null = null;
const dataDir = mkdtempSync(join(tmpdir(), 'zekt-startup-'));

beforeAll(async () => {
  sim = await processes.startSimulator();
  if (TEST_STORE === 'postgres') database = await createMigratedTestDatabase();
});
/** The servers a test started (the simulator stays for the file). */
const servers: ChildProcess[] = [];
function startServer(env: Record<string, string>, args: string[] = []): ChildProcess {
  const child = processes.start([serverCli, 'serve', ...args], env);
  servers.push(child);
  return child;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((child) => processes.kill(child)));
});
afterAll(async () => {
  await processes.stopAll();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The environment of a server on `port` against the simulator, on this run's store. */
function serverEnvironment(port: number, overrides: Record<string, string> = {}): Record<string, string> {
  const env = environmentForSimulator(sim, {
    port,
    dataDir,
    nodeEnv: 'development',
    logLevel: 'info',
    ...(database ? { databaseUrl: database.url } : {}),
  });
  return { ...(env as Record<string, string>), ...overrides };
}

/** What production asks for besides: an https base URL. */
const production = { NODE_ENV: 'production', ZEKT_BASE_URL: 'https://zekt.example.com' };

function anotherKey(): string {
  return generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString();
}

/** Waits (20 s at most) until `url` answers 2xx: the server is up (or ready). */
function answersOk(url: string): Promise<true> {
  return eventually(
    () =>
      fetch(url).then(
        (r) => (r.ok ? true : undefined),
        () => undefined,
      ),
    20_000,
  );
}

/** Runs `zekt serve` until it exits (within 20 s); its exit code and what it wrote. */
async function serveUntilExit(env: Record<string, string>, args: string[] = []) {
  return collect(startServer(env, args));
}

function collect(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`zekt serve did not exit: ${stderr}\n${stdout}`)), 20_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** The one line zekt wrote about the mistake: exactly one `zekt:` line and no stack frame anywhere. */
function oneLine(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.startsWith('zekt:'));
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

async function holdPort(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return server;
}

describe('zekt serve checks the App credentials against GitHub at start', () => {
  it('refuses to start in production with a valid RSA key that is not the App’s: one line naming GITHUB_PRIVATE_KEY, exit 2', async () => {
    const port = await freePort();
    const result = await serveUntilExit(
      serverEnvironment(port, { ...production, GITHUB_PRIVATE_KEY: anotherKey() }),
    );
    expect(result.code).toBe(2);
    const line = oneLine(result.stderr);
    expect(line).toContain(`GITHUB_PRIVATE_KEY is not a private key of App ${sim.app.id}`);
    expect(line).toContain('GITHUB_APP_ID');
    expect(line).toContain('A JSON web token could not be decoded');
    expect(line).not.toContain('PRIVATE KEY-----');
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('refuses to start in production with an App id GitHub does not know, naming GITHUB_APP_ID', async () => {
    const result = await serveUntilExit(
      serverEnvironment(await freePort(), { ...production, GITHUB_APP_ID: '424242' }),
    );
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain('GitHub knows no App 424242: GITHUB_APP_ID is wrong');
  });

  it('starts elsewhere, alive but not ready: /readyz answers 503 with the reason', async () => {
    const port = await freePort();
    const child = processes.start(
      [serverCli, 'serve'],
      serverEnvironment(port, { GITHUB_PRIVATE_KEY: anotherKey() }),
    );
    child.stdout?.resume();
    await answersOk(`http://127.0.0.1:${port}/healthz`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await ready.json()) as { code: string; detail: string };
    expect(problem.code).toBe('not_ready');
    expect(problem.detail).toContain('GITHUB_PRIVATE_KEY is not a private key of App');
  });

  it('starts in production when GitHub does not answer, ready, and says it will ask again', async () => {
    const port = await freePort();
    const nobody = await freePort();
    const child = startServer(
      serverEnvironment(port, { ...production, GITHUB_API_URL: `http://127.0.0.1:${nobody}/api/v3` }),
    );
    let stdout = '';
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
    });
    await answersOk(`http://127.0.0.1:${port}/readyz`);
    expect(stdout).toContain('the App credentials are not verified yet: cannot reach GitHub');
  });
});

describe('zekt serve names the port that is in use', () => {
  /**
   * Holds a free port while `serve` starts zekt serve with `setting` on it: exit 2, and one line
   * naming the setting, the port, and 0 as the way out.
   */
  async function refusedForPortInUse(
    setting: string,
    serve: (port: number) => Promise<{ code: number | null; stderr: string }>,
  ) {
    const port = await freePort();
    const holder = await holdPort(port);
    try {
      const result = await serve(port);
      expect(result.code).toBe(2);
      const line = oneLine(result.stderr);
      expect(line).toContain(`${setting} ${port} is in use on 127.0.0.1`);
      expect(line).toContain(`${setting}=0 picks any free one`);
    } finally {
      holder.close();
    }
  }

  it('PORT: one line, exit 2, with 0 for a free port', async () => {
    await refusedForPortInUse('PORT', (port) => serveUntilExit(serverEnvironment(port)));
  });

  it('ZEKT_METRICS_PORT of a second worker on the host: one line, exit 2', async () => {
    await refusedForPortInUse('ZEKT_METRICS_PORT', async (metricsPort) =>
      serveUntilExit(serverEnvironment(await freePort(), { ZEKT_METRICS_PORT: String(metricsPort) }), [
        '--role',
        'worker',
      ]),
    );
  });
});
