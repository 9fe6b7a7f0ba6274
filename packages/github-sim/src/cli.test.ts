import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCli } from './cli-args.js';

const execFileAsync = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const cliPath = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

// The CLI runs from the build, so build first: the test never runs a stale dist/.
beforeAll(async () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  await execFileAsync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: packageDir });
});

describe('zekt-github-sim serve', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterAll(() => {
    if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
  });

  it('prints one JSON line with the real port, serves the control API, and exits 0 on SIGTERM', async () => {
    const serving = spawn(
      process.execPath,
      [
        cliPath,
        'serve',
        '--port',
        '0',
        '--app-id',
        '4242',
        '--webhook-secret',
        's3',
        '--callback-url',
        'http://127.0.0.1:3000/cb',
      ],
      {
        stdio: 'pipe',
      },
    );
    child = serving;
    const lines = createInterface({ input: serving.stdout });
    const [line] = (await once(lines, 'line')) as [string];
    const started = JSON.parse(line) as {
      url: string;
      apiUrl: string;
      oidcIssuer: string;
      app: { id: number; webhookSecret: string; privateKeyPem: string; hookId: number };
    };
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(started.url).not.toMatch(/:0$/);
    expect(started.apiUrl).toBe(`${started.url}/api/v3`);
    expect(started.oidcIssuer).toBe(`${started.url}/_services/token`);
    expect(started.app).toMatchObject({
      id: 4242,
      webhookSecret: 's3',
      callbackUrls: ['http://127.0.0.1:3000/cb'],
    });

    const app = (await (await fetch(`${started.url}/_sim/app`)).json()) as typeof started.app;
    expect(app).toMatchObject({ id: 4242, hookId: started.app.hookId });
    expect(app.privateKeyPem).toContain('PRIVATE KEY-----');

    // `run` drives the same process through its control API.
    const installed = await fetch(`${started.url}/_sim/installations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ account: { login: 'acme' }, repositories: ['svc'] }),
    });
    expect(installed.status).toBe(201);
    const { stdout } = await execFileAsync(process.execPath, [
      cliPath,
      'run',
      'acme/svc',
      '--workflow',
      'deploy.yml',
      '--sim-url',
      started.url,
      '--conclusion',
      'failure',
    ]);
    expect(JSON.parse(stdout)).toMatchObject({
      run: { name: 'Deploy', conclusion: 'failure', path: '.github/workflows/deploy.yml' },
      env: { GITHUB_REPOSITORY: 'acme/svc' },
    });

    const badInput = await fetch(`${started.url}/_sim/installations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ account: { login: 'acme' }, repositories: ['again'] }),
    });
    expect(badInput.status).toBe(400);
    expect(await badInput.json()).toEqual({ error: expect.stringContaining('already has an installation') });

    const exited = once(serving, 'exit');
    serving.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });

  it('documents every option in --help and refuses bad arguments with exit code 2', async () => {
    const { stdout } = await execFileAsync(process.execPath, [cliPath, '--help']);
    for (const option of [
      '--port',
      '--host',
      '--app-id',
      '--private-key-path',
      '--webhook-url',
      '--webhook-secret',
      '--allow-private-hook-urls',
      '--callback-url',
      '--sim-url',
      '--zekt-url',
      '--event-type',
      '--payload',
      '--conclusion',
    ]) {
      expect(stdout).toContain(option);
    }
    const failure = await execFileAsync(process.execPath, [cliPath, 'serve', '--port', 'abc']).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 2, stderr: expect.stringContaining('--port must be an integer') });
  });

  it('is on the PATH of npm scripts after npm ci, as node_modules/.bin/zekt-github-sim', async () => {
    // npm links a bin only if its file exists at install time, before the build: the committed
    // bin/zekt-github-sim.js is what gets linked, and it runs the built CLI.
    const linked = fileURLToPath(new URL('../../../node_modules/.bin/zekt-github-sim', import.meta.url));
    const { stdout } = await execFileAsync(linked, ['--help']);
    expect(stdout).toContain('zekt-github-sim [serve] [options]');
  });
});

describe('parseCli', () => {
  it('implies serve, defaults the port to 3001, and parses run with a message', () => {
    expect(parseCli([])).toMatchObject({
      command: 'serve',
      port: 3001,
      host: '127.0.0.1',
      allowPrivateHookUrls: false,
    });
    expect(
      parseCli(['--port', '0', '--allow-private-hook-urls', '--app-events', 'workflow_run']),
    ).toMatchObject({
      command: 'serve',
      port: 0,
      allowPrivateHookUrls: true,
      appEvents: ['workflow_run'],
    });
    expect(
      parseCli(['--callback-url', 'http://127.0.0.1:3000/cb', '--callback-url', 'https://zekt.example/cb']),
    ).toMatchObject({ callbackUrls: ['http://127.0.0.1:3000/cb', 'https://zekt.example/cb'] });
    expect(
      parseCli([
        'run',
        'acme/svc',
        '--workflow',
        'deploy.yml',
        '--sim-url',
        'http://127.0.0.1:3001/',
        '--zekt-url',
        'http://127.0.0.1:3000',
        '--event-type',
        'deployed',
        '--payload',
        '{"v":1}',
      ]),
    ).toEqual({
      command: 'run',
      simUrl: 'http://127.0.0.1:3001',
      repository: 'acme/svc',
      body: {
        workflow: 'deploy.yml',
        message: { zektUrl: 'http://127.0.0.1:3000', eventType: 'deployed', payload: { v: 1 } },
      },
    });
    expect(() => parseCli(['run', 'acme/svc', '--workflow', 'x.yml'])).toThrow(/--sim-url/);
    expect(() =>
      parseCli(['run', 'acme/svc', '--workflow', 'x.yml', '--sim-url', 'http://x', '--payload', '{']),
    ).toThrow(/--zekt-url/);
  });
});
