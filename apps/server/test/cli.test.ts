import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** The built `zekt` command, run as an operator would. */
const cli = resolve(import.meta.dirname, '../dist/cli/main.js');
const repoRoot = resolve(import.meta.dirname, '../../..');
const dataDir = mkdtempSync(join(tmpdir(), 'zekt-cli-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function zekt(args: string[], env: Record<string, string> = {}) {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(GITHUB_|ZEKT_|DATABASE_URL|PORT|NODE_ENV)/.test(name)),
  );
  const result = spawnSync(process.execPath, [cli, ...args], { env: { ...clean, ...env }, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('zekt CLI', () => {
  it('refuses to serve without configuration, listing every missing setting', () => {
    const result = zekt(['serve'], { ZEKT_DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    for (const name of ['GITHUB_APP_ID', 'GITHUB_PRIVATE_KEY', 'GITHUB_WEBHOOK_SECRET', 'ZEKT_SECRET']) {
      expect(result.stderr).toContain(name);
    }
    expect(result.stderr).not.toContain('    at ');
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

  it('creates an API token on a fresh store and prints it as the last line', () => {
    const result = zekt(['token', 'create', '--login', 'octocat'], { ZEKT_DATA_DIR: dataDir });
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n').pop()).toMatch(/^zkt_[A-Za-z0-9_-]{43}$/);
  });

  it('explains a membership for an account that never installed the App', () => {
    const result = zekt(['token', 'create', '--login', 'octocat', '--account', 'nobody'], {
      ZEKT_DATA_DIR: dataDir,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('install the Zekt GitHub App');
  });

  it('documents its commands and settings', () => {
    const result = zekt(['serve', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('zekt token create --login <user>');
    expect(result.stdout).toContain('ZEKT_INSTALLATION_DISPATCH_RATE');
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
