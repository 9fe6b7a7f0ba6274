import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/usage.js';
import { openStore } from '../src/store/store.js';
import { upsertUser } from '../src/store/users.js';
import { eventually, freePort } from './support/harness.js';
import { startHttpRecorder } from './support/http-recorder.js';
import { operatorEnvironment } from './support/operator-environment.js';

/** The built `zekt` command, run as an operator would. */
const cli = resolve(import.meta.dirname, '../dist/cli/main.js');
const repoRoot = resolve(import.meta.dirname, '../../..');
const dataDir = mkdtempSync(join(tmpdir(), 'zekt-cli-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const cleanEnvironment = operatorEnvironment;

/**
 * A module-resolution hook (node --import) that fails any import of the simulator package, as a
 * production install without devDependencies would.
 */
const refuseSimulator = join(dataDir, 'refuse-simulator.mjs');
writeFileSync(
  join(dataDir, 'refuse-simulator-hooks.mjs'),
  `export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (specifier === 'zekt-github-sim' || resolved.url.includes('/packages/github-sim/'))
    throw new Error('zekt-github-sim was imported (' + specifier + ')');
  return resolved;
}
`,
);
writeFileSync(
  refuseSimulator,
  "import { register } from 'node:module';\nregister('./refuse-simulator-hooks.mjs', import.meta.url);\n",
);

/** The settings `zekt serve` requires (GitHub does not answer here: it starts anyway, not ready). */
const serviceSettings = {
  GITHUB_APP_ID: '1',
  GITHUB_PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----',
  GITHUB_WEBHOOK_SECRET: 'whsec',
  ZEKT_SECRET: 'f'.repeat(64),
};

function zekt(args: string[], env: Record<string, string> = {}, script = [cli]) {
  const result = spawnSync(process.execPath, [...script, ...args], {
    env: { ...cleanEnvironment(), ...env },
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * The same without blocking this process: several at a time, or while a server of the test answers
 * the command.
 */
function zektAsync(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], {
      env: { ...cleanEnvironment(), ...env },
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

describe('zekt CLI', () => {
  it('refuses to serve without configuration, listing every missing setting', () => {
    // Without ZEKT_SECRET nothing can be sealed, the App registered through setup included.
    const bare = zekt(['serve'], { ZEKT_DATA_DIR: dataDir });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('ZEKT_SECRET is required');
    expect(bare.stderr).toContain('openssl rand -hex 32');
    // The App's settings may all be left out (setup mode); one of them asks for the others.
    expect(bare.stderr).not.toContain('GITHUB_APP_ID');
    const partial = zekt(['serve'], { ZEKT_DATA_DIR: dataDir, GITHUB_CLIENT_ID: 'Iv1.x' });
    expect(partial.code).toBe(2);
    for (const name of ['GITHUB_APP_ID', 'GITHUB_PRIVATE_KEY', 'GITHUB_WEBHOOK_SECRET', 'ZEKT_SECRET']) {
      expect(partial.stderr).toContain(name);
    }
    expect(bare.stderr).not.toContain('    at ');
    expect(partial.stderr).not.toContain('    at ');
  });

  it('exits at once with a clear message when DATABASE_URL points at a server that does not answer', () => {
    const result = zekt(['serve'], {
      GITHUB_APP_ID: '1',
      GITHUB_PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----',
      GITHUB_WEBHOOK_SECRET: 'whsec',
      ZEKT_SECRET: 'f'.repeat(64),
      DATABASE_URL: 'postgres://zekt:s3cret@127.0.0.1:1/zekt',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'cannot reach the database at postgres://zekt:***@127.0.0.1:1/zekt (DATABASE_URL)',
    );
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).not.toContain('s3cret');
    expect(result.stderr).not.toContain('    at ');
  });

  it('serves without loading the GitHub simulator (a production install omits it), logging JSON lines', async () => {
    const port = await freePort();
    const serve = spawn(process.execPath, ['--import', refuseSimulator, cli, 'serve'], {
      env: {
        ...cleanEnvironment(),
        ...serviceSettings,
        ZEKT_DATA_DIR: dataDir,
        PORT: String(port),
        // Tests share the machine: a free metrics port.
        ZEKT_METRICS_PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    serve.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    try {
      await eventually(() =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok || undefined,
          () => undefined,
        ),
      );
      await eventually(() => (stdout.includes('request completed') ? true : undefined));
      const lines = stdout.trim().split('\n');
      for (const line of lines) expect(typeof (JSON.parse(line) as { level: unknown }).level).toBe('number');
    } finally {
      const exited = new Promise((done) => serve.once('exit', done));
      serve.kill('SIGTERM');
      await exited;
    }
  });

  it('loads the simulator in zekt dev, which the guard of the previous test refuses', () => {
    const result = zekt(['--import', refuseSimulator, cli, 'dev'], { ZEKT_DATA_DIR: dataDir }, []);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('zekt-github-sim was imported');
  });

  describe('token create', () => {
    const storeDir = mkdtempSync(join(tmpdir(), 'zekt-token-'));
    afterAll(() => rmSync(storeDir, { recursive: true, force: true }));

    it('never creates a store: without one it names DATABASE_URL and ZEKT_DATA_DIR, and writes nothing', () => {
      const result = zekt(['token', 'create', '--login', 'octocat'], { ZEKT_DATA_DIR: storeDir });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`there is no Zekt store at ${join(storeDir, 'zekt.db')}`);
      expect(result.stderr).toContain('DATABASE_URL');
      expect(result.stderr).toContain('ZEKT_DATA_DIR');
      expect(result.stderr).not.toContain('    at ');
      expect(result.stdout).not.toMatch(/zkt_/);
      expect(readdirSync(storeDir)).toEqual([]);
    });

    it('refuses a login Zekt has never seen, saying how to make it known', () => {
      expect(zekt(['migrate'], { ZEKT_DATA_DIR: storeDir }).code).toBe(0);
      const result = zekt(['token', 'create', '--login', 'octocat'], {
        ZEKT_DATA_DIR: storeDir,
        ZEKT_BASE_URL: 'https://zekt.example.com',
      });
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toBe(
        'Zekt has never seen the GitHub login octocat: log in to the console once as octocat (https://zekt.example.com/auth/login), or install the Zekt GitHub App as that user; then run this again',
      );
      expect(result.stdout).not.toMatch(/zkt_/);
    });

    it('creates a token for a login Zekt knows and prints it as the last line', async () => {
      const store = await openStore({ kind: 'sqlite', path: join(storeDir, 'zekt.db') });
      await upsertUser(store.db, { login: 'octocat', githubId: 583231 }, Date.now());
      await store.close();
      const result = zekt(['token', 'create', '--login', 'OctoCat'], { ZEKT_DATA_DIR: storeDir });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.trim().split('\n').pop()).toMatch(/^zkt_[A-Za-z0-9_-]{43}$/);
    });

    it('explains a membership for an account that never installed the App', () => {
      const result = zekt(['token', 'create', '--login', 'octocat', '--account', 'nobody'], {
        ZEKT_DATA_DIR: storeDir,
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('install the Zekt GitHub App');
    });
  });

  it('sends zekt deliveries to ZEKT_BASE_URL, unless ZEKT_URL or --url names another', async () => {
    const api = await startHttpRecorder(200, { deliveries: [], nextCursor: null });
    const elsewhere = await startHttpRecorder(200, { deliveries: [], nextCursor: null });
    try {
      const base = await zektAsync(['deliveries', 'list', '--status', 'Failed'], {
        ZEKT_BASE_URL: api.url,
        ZEKT_TOKEN: 'zkt_test',
      });
      expect(base.stderr).toBe('');
      expect(base.code).toBe(0);
      expect(api.requests).toEqual([
        { method: 'GET', path: '/api/v1/deliveries?status=Failed', authorization: 'Bearer zkt_test' },
      ]);
      const url = await zektAsync(['deliveries', 'list'], {
        ZEKT_BASE_URL: api.url,
        ZEKT_URL: elsewhere.url,
        ZEKT_TOKEN: 'zkt_test',
      });
      expect(url.code).toBe(0);
      expect(elsewhere.requests).toHaveLength(1);
      expect(api.requests).toHaveLength(1);
    } finally {
      await api.close();
      await elsewhere.close();
    }
  });

  it('documents every setting in serve --help', () => {
    const result = zekt(['serve', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('zekt serve [--role api|worker|all]');
    expect(result.stdout).toContain('ZEKT_INSTALLATION_DISPATCH_RATE');
    expect(result.stdout).not.toContain('zekt token create');
  });

  it('gives each command its own usage: its synopsis, every option it accepts with defaults, examples', async () => {
    const helps = await Promise.all(
      COMMANDS.map((usage) => zektAsync([...usage.command.split(' '), '--help'])),
    );
    COMMANDS.forEach((usage, i) => {
      const help = helps[i]!;
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout.startsWith(`zekt ${usage.command} — ${usage.summary}`)).toBe(true);
      expect(help.stdout).toContain(usage.synopsis[0]);
      for (const option of usage.options) expect(help.stdout).toContain(`--${option.name}`);
      for (const option of usage.options.filter((o) => o.default))
        expect(help.stdout).toContain(`(default: ${option.default})`);
      expect(help.stdout).toContain(`Examples:\n  ${usage.examples[0]}`);
    });
    expect(new Set(helps.map((h) => h.stdout)).size).toBe(COMMANDS.length);
    expect(helps.find((_, i) => COMMANDS[i]!.command === 'dev')!.stdout).not.toContain('--role');
  });

  it('lists the commands in zekt --help', () => {
    const result = zekt(['--help']);
    expect(result.code).toBe(0);
    for (const usage of COMMANDS) {
      const line = result.stdout.split('\n').find((l) => l.startsWith(`  ${usage.command} `));
      expect(line?.endsWith(usage.summary)).toBe(true);
    }
  });

  it('refuses an unknown option with the command’s usage, exit 2', () => {
    const result = zekt(['dev', '--prot', '4000']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('zekt dev: unknown option --prot');
    expect(result.stderr).toContain('zekt dev [--port <port>] [--sim-port <port>]');
    expect(result.stderr).not.toContain('    at ');
    expect(result.stdout).toBe('');
  });

  it('refuses a missing option value, a stray argument and an unknown subcommand, each with its usage', async () => {
    const [missing, stray, sub] = await Promise.all([
      zektAsync(['serve', '--role']),
      zektAsync(['migrate', 'now']),
      zektAsync(['token', 'revoke']),
    ]);
    expect([missing.code, stray.code, sub.code]).toEqual([2, 2, 2]);
    expect(missing.stderr).toContain('zekt serve: --role needs a value');
    expect(missing.stderr).toContain('zekt serve [--role api|worker|all]');
    expect(stray.stderr).toContain('zekt migrate: unexpected argument now');
    expect(sub.stderr).toContain('zekt token create: unknown subcommand revoke');
    expect(sub.stderr).toContain('zekt token create --login <user>');
  });

  it('refuses an unknown command with the list of commands, exit 2', () => {
    const result = zekt(['srve']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('zekt: unknown command srve');
    expect(result.stderr).toContain('  serve ');
    expect(result.stderr).not.toContain('    at ');
  });

  it('runs as `npx zekt` from the repository root, through the committed launcher npm links', () => {
    // --no: fail instead of looking the name up in the registry, which is what a missing link did.
    const result = spawnSync('npx', ['--no', '--', 'zekt', 'token', '--help'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('zekt token create --login <user>');
  });

  it('says to build first when the launcher finds no build', () => {
    const clone = mkdtempSync(join(tmpdir(), 'zekt-unbuilt-'));
    try {
      cpSync(resolve(import.meta.dirname, '../bin/zekt.js'), join(clone, 'bin/zekt.js'));
      const result = spawnSync(process.execPath, [join(clone, 'bin/zekt.js'), '--help'], {
        encoding: 'utf8',
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('run `npm run build`');
      expect(result.stderr).not.toContain('    at ');
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });
});
