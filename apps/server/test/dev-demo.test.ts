import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, freePort } from './support/harness.js';
import { serverCli } from './support/processes.js';

/**
 * The README's quick start, as a newcomer runs it: `zekt dev` (what `npm start` runs after the build),
 * then `zekt demo-trigger` (what `npm run trigger` runs) in another terminal.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'zekt-dev-'));
let dev: ChildProcess | undefined;
afterAll(async () => {
  if (dev && dev.exitCode === null) {
    const exited = new Promise((done) => dev!.once('exit', done));
    dev.kill('SIGINT');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('zekt dev and the demo trigger', () => {
  it('brings up the demo and shows the dispatch arriving with the message', async () => {
    const [port, simPort] = [await freePort(), await freePort()];
    const env = { ...process.env, ZEKT_DATA_DIR: dataDir };
    dev = spawn(process.execPath, [serverCli, 'dev', '--port', String(port), '--sim-port', String(simPort)], {
      env: { ...env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    dev.stdout!.on('data', (chunk) => {
      output += chunk;
    });
    await eventually(() => (output.includes('Press Ctrl+C') ? true : undefined), 30_000);
    expect(output).toContain(`http://127.0.0.1:${port}`);
    // The README's words: the service acme-deploys, alice for acme, bob for globex.
    expect(output).toContain(
      'published as the service "acme-deploys" (repository_dispatch type acme-deployed)',
    );
    expect(output).toContain('acme (user alice): acme/api, workflow deploy.yml whitelisted');
    expect(output).toContain('globex (user bob): globex/deployer, subscription approved');
    expect(output).toContain('npm run trigger -- \'{"version":"1.2.3"}\'');

    // A second `npm start` on the same directory stops before touching the running demo's data.
    const demoState = readFileSync(join(dataDir, 'dev/demo.json'), 'utf8');
    const second = await run(
      ['dev', '--port', String(await freePort()), '--sim-port', String(await freePort())],
      env,
    );
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`is in use by another zekt dev (pid ${dev.pid}, started `);
    expect(second.stderr).toContain('ZEKT_DATA_DIR=');
    expect(second.stderr).not.toContain('    at ');
    expect(readFileSync(join(dataDir, 'dev/demo.json'), 'utf8')).toBe(demoState);

    const trigger = spawnSync(process.execPath, [serverCli, 'demo-trigger', '{"version":"1.2.3"}'], {
      env,
      encoding: 'utf8',
    });
    expect(trigger.status, trigger.stderr).toBe(0);
    expect(trigger.stdout).toContain('repository_dispatch received by globex/deployer');
    expect(trigger.stdout).toContain('client_payload.zekt.payload equals the message.');
    expect(trigger.stdout).toMatch(/delivery record: Completed \(dispatched /);

    // GitHub rejects the next dispatch (422): the trigger reports the Failed record and why.
    const fault = await fetch(`http://127.0.0.1:${simPort}/_sim/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        method: 'POST',
        path: '/repos/globex/deployer/dispatches',
        faults: [
          { kind: 'status', status: 422, body: { message: 'Invalid request: client_payload too deep' } },
        ],
      }),
    });
    expect(fault.status).toBe(201);
    const rejected = await run(['demo-trigger', '{"version":"1.2.4"}'], { ZEKT_DATA_DIR: dataDir });
    expect(rejected.code, rejected.stderr).toBe(1);
    expect(rejected.stdout).toMatch(
      /delivery record: Failed \(dispatch_rejected\); GitHub answered attempt 1 with 422 \(rejected\): .*client_payload too deep/,
    );
    expect(rejected.stdout).not.toContain('repository_dispatch received');

    // Its logs are readable lines, not pino's JSON.
    expect(output).toMatch(/^\d\d:\d\d:\d\d {2}INFO {3}.*request completed/m);
    expect(output).not.toMatch(/^\{"level"/m);

    const exited = new Promise<number | null>((done) => dev!.once('exit', done));
    dev.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(existsSync(join(dataDir, 'dev.lock'))).toBe(false);
    // A whole demo and four CLI runs on a busy machine: generous, never a timing claim.
  }, 90_000);

  it('names the busy port and how to choose another; honours PORT, --port over it; takes over a stale lock', async () => {
    const busy = await occupiedPort();
    try {
      const dirs = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'zekt-dev-port-')));
      // A lock left by a process that is gone (the dev demo was killed): taken over, not refused.
      const gone = spawnSync(process.execPath, ['-e', '']).pid;
      mkdirSync(dirs[2]!, { recursive: true });
      writeFileSync(
        join(dirs[2]!, 'dev.lock'),
        JSON.stringify({ pid: gone, startedAt: '2026-01-01T00:00:00.000Z' }),
      );
      const [viaEnv, flagOverEnv, simulator] = await Promise.all([
        run(['dev', '--sim-port', String(await freePort())], {
          ZEKT_DATA_DIR: dirs[0]!,
          PORT: String(busy.port),
        }),
        run(['dev', '--port', String(busy.port), '--sim-port', String(await freePort())], {
          ZEKT_DATA_DIR: dirs[1]!,
          PORT: String(await freePort()),
        }),
        run(['dev', '--port', String(await freePort()), '--sim-port', String(busy.port)], {
          ZEKT_DATA_DIR: dirs[2]!,
        }),
      ]);
      for (const result of [viaEnv, flagOverEnv]) {
        expect(result.code).toBe(2);
        expect(result.stderr).toBe(
          `zekt dev: port ${busy.port} (Zekt's API) is in use by another process; choose another with --port <port> or PORT=<port>\n`,
        );
      }
      expect(simulator.code).toBe(2);
      expect(simulator.stderr).toBe(
        `zekt dev: port ${busy.port} (the GitHub simulator) is in use by another process; choose another with --sim-port <port>\n`,
      );
      // Each released its lock on the way out.
      for (const dir of dirs) expect(existsSync(join(dir, 'dev.lock'))).toBe(false);
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    } finally {
      await new Promise((done) => busy.server.close(done));
    }
    // Three `zekt dev` processes start side by side on a busy machine: generous, never a timing claim.
  }, 120_000);
});

/** A `zekt` command run to its end, without the test runner's ZEKT_ or PORT settings. */
function run(args: string[], env: Record<string, string>) {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(GITHUB_|ZEKT_|DATABASE_URL|PORT$)/.test(name)),
  );
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, [serverCli, ...args], {
      env: { ...clean, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

async function occupiedPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, port: (server.address() as { port: number }).port };
}
