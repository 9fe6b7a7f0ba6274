import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/free-port.js';
import { eventually } from '../src/test-support/harness.js';

/**
 * The server's npm package as an operator gets it: `npm pack -w apps/server`, installed into an
 * empty directory (`npm install ./zekt-server-<version>.tgz`, from the local npm cache where it
 * can), then `npx zekt serve` on the embedded SQLite store with the App's settings only.
 */
const execFileAsync = promisify(execFile);
const repoRoot = resolve(import.meta.dirname, '../../..');
const manifest = JSON.parse(readFileSync(join(repoRoot, 'apps/server/package.json'), 'utf8'));

let packDir: string;
let installDir: string;
let tarball: string;
let packedFiles: string[];
let server: ChildProcess | undefined;

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await execFileAsync('npm', args, { cwd, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

beforeAll(async () => {
  for (const built of ['apps/server/dist/cli/main.js', 'apps/console/dist/index.html'])
    if (!existsSync(join(repoRoot, built)))
      throw new Error(`${built} is missing: run \`npm run build\` (npm test does) first`);
  packDir = mkdtempSync(join(tmpdir(), 'zekt-pack-'));
  installDir = mkdtempSync(join(tmpdir(), 'zekt-install-'));
  const [packed] = JSON.parse(
    await npm(['pack', '-w', 'apps/server', '--pack-destination', packDir, '--json'], repoRoot),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(packDir, packed!.filename);
  packedFiles = packed!.files.map((file) => file.path);
  await npm(['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], installDir);
}, 600_000);

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((done) => server!.once('exit', done));
    server.kill('SIGKILL');
    await exited;
  }
  for (const dir of [packDir, installDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('holds the compiled server and the built console, no sources and no tests', () => {
    expect(tarball).toMatch(new RegExp(`zekt-server-${manifest.version.replaceAll('.', '\\.')}\\.tgz$`));
    expect(packedFiles).toEqual(expect.arrayContaining(['package.json', 'README.md', 'CHANGELOG.md']));
    expect(packedFiles).toContain('bin/zekt.js');
    expect(packedFiles).toContain('dist/cli/main.js');
    expect(packedFiles).toContain('console/index.html');
    expect(packedFiles.some((file) => /^console\/console\/.+\.js$/.test(file))).toBe(true);
    const outside = packedFiles.filter(
      (file) =>
        !/^(bin|dist|console)\//.test(file) && !['package.json', 'README.md', 'CHANGELOG.md'].includes(file),
    );
    expect(outside).toEqual([]);
    expect(packedFiles.filter((file) => /\.(ts|map|tsbuildinfo)$/.test(file))).toEqual([]);
    expect(packedFiles.filter((file) => /\.test\.|test-support|(^|\/)test\//.test(file))).toEqual([]);
    // Packing copies the console and the changelog in and removes the copies again.
    expect(existsSync(join(repoRoot, 'apps/server/console'))).toBe(false);
    expect(existsSync(join(repoRoot, 'apps/server/CHANGELOG.md'))).toBe(false);
  });

  it('carries one version for the server, the action and the simulator, a changelog entry for it and honest engines', () => {
    const versionOf = (path: string) =>
      JSON.parse(readFileSync(join(repoRoot, path, 'package.json'), 'utf8')).version as string;
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(versionOf('packages/action')).toBe(manifest.version);
    expect(versionOf('packages/github-sim')).toBe(manifest.version);
    expect(readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8')).toContain(`\n## ${manifest.version}\n`);
    // The range the native SQLite driver supports, and the Node this process runs on inside it.
    const driver = JSON.parse(
      readFileSync(join(installDir, 'node_modules/better-sqlite3/package.json'), 'utf8'),
    ).engines.node as string;
    for (const major of manifest.engines.node.match(/\d+(?=\.)/g) as string[])
      expect(driver, `better-sqlite3 supports Node ${major}`).toContain(`${major}.x`);
    const installed = JSON.parse(
      readFileSync(join(installDir, 'node_modules/@zekt/server/package.json'), 'utf8'),
    );
    expect(installed.engines).toEqual(manifest.engines);
  });

  it('installs without the workspace: its dependencies come from the registry, the simulator is optional', () => {
    expect(existsSync(join(installDir, 'node_modules/@zekt/server/dist/cli/main.js'))).toBe(true);
    expect(existsSync(join(installDir, 'node_modules/zekt-github-sim'))).toBe(false);
    expect(existsSync(join(installDir, 'node_modules/@zekt/console'))).toBe(false);
  });

  it('answers npx zekt --help without asking for a build', async () => {
    const { stdout } = await execFileAsync('npx', ['zekt', '--help'], { cwd: installDir });
    expect(stdout).toContain('serve');
    expect(stdout).toContain('backup');
    expect(stdout).not.toMatch(/build/i);
  });

  it('says how to get the simulator when zekt dev needs it', async () => {
    const failure = await execFileAsync('npx', ['zekt', 'dev', '--port', '0'], {
      cwd: installDir,
      env: { ...process.env, ZEKT_DATA_DIR: join(installDir, 'dev-data') },
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain(
      `npm install "zekt-github-sim@${manifest.peerDependencies['zekt-github-sim']}"`,
    );
    expect(failure?.stderr).not.toContain('    at ');
  });

  it('serves the API and the console with npx zekt serve on SQLite', async () => {
    const port = await freePort();
    const closedPort = await freePort();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    server = spawn('npx', ['zekt', 'serve'], {
      cwd: installDir,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        NODE_ENV: 'development',
        ZEKT_DATA_DIR: join(installDir, 'data'),
        ZEKT_SECRET: randomBytes(32).toString('hex'),
        GITHUB_APP_ID: '1',
        GITHUB_PRIVATE_KEY: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
        GITHUB_WEBHOOK_SECRET: randomBytes(16).toString('hex'),
        // Nothing listens there: the test reaches no GitHub.
        GITHUB_API_URL: `http://127.0.0.1:${closedPort}/api/v3`,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    server.stderr!.on('data', (chunk) => {
      stderr += chunk;
    });
    const url = `http://127.0.0.1:${port}`;
    const health = await eventually(async () => {
      if (server!.exitCode !== null) throw new Error(`npx zekt serve exited ${server!.exitCode}: ${stderr}`);
      return fetch(`${url}/healthz`).catch(() => undefined);
    }, 60_000);
    expect(health.status).toBe(200);
    expect(existsSync(join(installDir, 'data/zekt.db'))).toBe(true);

    const page = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<div id="root">');
    const script = /src="(\/console\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(url + script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('javascript');

    const openapi = await fetch(`${url}/api/openapi.json`);
    expect(openapi.status).toBe(200);
    const document = (await openapi.json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toContain('/api/v1/deliveries');

    const exited = new Promise<number | null>((done) => server!.once('exit', done));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
