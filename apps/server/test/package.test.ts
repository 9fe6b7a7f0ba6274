import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/free-port.js';
import { eventually } from './support/harness.js';

/**
 * The server's npm package as an operator gets it: `npm pack -w apps/server`, installed into an
 * empty directory (`npm install ./zekt-server-<version>.tgz`, from the local npm cache where it
 * can), then `npx zekt serve` on the embedded SQLite store with the App's settings only.
 *
 * better-sqlite3's install script looks for a prebuilt binary before it compiles one: from the
 * network on an operator's machine, here from a local directory (prebuild-install's
 * `local-prebuilds`) holding the binary the repository's own `npm ci` built for this Node. The
 * install script still runs; it only finds its binary the way it would have downloaded it, where
 * compiling SQLite would take minutes on a busy machine. (When npm picks a newer better-sqlite3
 * than the repository's, it compiles.)
 */
const execFileAsync = promisify(execFile);
const repoRoot = resolve(import.meta.dirname, '../../..');
const manifest = JSON.parse(readFileSync(join(repoRoot, 'apps/server/package.json'), 'utf8'));

let packDir: string;
let installDir: string;
let tarball: string;
let packedFiles: string[];
let server: ChildProcess | undefined;

async function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync('npm', args, { cwd, maxBuffer: 64 * 1024 * 1024 });
}

interface Lockfile {
  packages: Record<string, { version?: string; dependencies?: Record<string, string> }>;
}

beforeAll(async () => {
  for (const built of ['apps/server/dist/cli/main.js', 'apps/console/dist/index.html'])
    if (!existsSync(join(repoRoot, built)))
      throw new Error(`${built} is missing: run \`npm run build\` (npm test does) first`);
  packDir = mkdtempSync(join(tmpdir(), 'zekt-pack-'));
  installDir = mkdtempSync(join(tmpdir(), 'zekt-install-'));
  const [packed] = JSON.parse(
    (await npm(['pack', '-w', 'apps/server', '--pack-destination', packDir, '--json'], repoRoot)).stdout,
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(packDir, packed!.filename);
  packedFiles = packed!.files.map((file) => file.path);
  await execFileAsync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
    cwd: installDir,
    env: { ...process.env, npm_config_better_sqlite3_local_prebuilds: await localPrebuilds(packDir) },
    maxBuffer: 64 * 1024 * 1024,
  });
}, 900_000);

/** A prebuild-install directory with the repository's better-sqlite3 binary, named as its downloads are. */
async function localPrebuilds(dir: string): Promise<string> {
  const driver = join(repoRoot, 'node_modules/better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(driver, 'package.json'), 'utf8'));
  const prebuilds = join(dir, 'prebuilds');
  mkdirSync(prebuilds);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await execFileAsync('tar', [
    '-czf',
    join(prebuilds, name),
    '-C',
    driver,
    'build/Release/better_sqlite3.node',
  ]);
  return prebuilds;
}

afterAll(async () => {
  // npx runs zekt through a shell: the whole process group goes, as with Ctrl+C in a terminal.
  if (server?.pid !== undefined) {
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  for (const dir of [packDir, installDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * The Node majors an `engines` range admits, for the forms the package uses: `^A.B.C`, `>=A.B.C`
 * and `>=A.B.C <N`, joined by `||`. Any other form fails the test rather than being misread.
 */
function majorsAdmitted(range: string): number[] {
  const majors = new Set<number>();
  for (const clause of range.split('||').map((part) => part.trim())) {
    const caret = /^\^(\d+)\.\d+\.\d+$/.exec(clause);
    const atLeast = /^>=(\d+)\.\d+\.\d+(?: <(\d+))?$/.exec(clause);
    if (caret) majors.add(Number(caret[1]));
    else if (atLeast) {
      const below = atLeast[2] === undefined ? 40 : Number(atLeast[2]);
      for (let major = Number(atLeast[1]); major < below; major++) majors.add(major);
    } else throw new Error(`engines.node: cannot read ${JSON.stringify(clause)}`);
  }
  return [...majors].sort((a, b) => a - b);
}

describe('the npm package', () => {
  it('holds the compiled server and the built console, no sources and no tests', () => {
    expect(tarball).toMatch(new RegExp(`zekt-server-${manifest.version.replaceAll('.', '\\.')}\\.tgz$`));
    expect(packedFiles).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'CHANGELOG.md', 'npm-shrinkwrap.json']),
    );
    expect(packedFiles).toContain('bin/zekt.js');
    expect(packedFiles).toContain('dist/cli/main.js');
    expect(packedFiles).toContain('console/index.html');
    expect(packedFiles.some((file) => /^console\/console\/.+\.js$/.test(file))).toBe(true);
    const outside = packedFiles.filter(
      (file) =>
        !/^(bin|dist|console)\//.test(file) &&
        !['package.json', 'README.md', 'CHANGELOG.md', 'npm-shrinkwrap.json'].includes(file),
    );
    expect(outside).toEqual([]);
    expect(packedFiles.filter((file) => /\.(ts|map|tsbuildinfo)$/.test(file))).toEqual([]);
    expect(packedFiles.filter((file) => /\.test\.|test-support|(^|\/)test\//.test(file))).toEqual([]);
    // The bench is a development harness in its own workspace, not part of the service.
    expect(packedFiles.filter((file) => /(^|\/)bench\//.test(file))).toEqual([]);
    // Packing copies the console and the changelog in and removes the copies again.
    expect(existsSync(join(repoRoot, 'apps/server/console'))).toBe(false);
    expect(existsSync(join(repoRoot, 'apps/server/CHANGELOG.md'))).toBe(false);
    expect(existsSync(join(repoRoot, 'apps/server/npm-shrinkwrap.json'))).toBe(false);
  });

  it("pins the dependency tree the repository's tests run on (npm-shrinkwrap.json)", () => {
    // npm follows a package's shrinkwrap when it installs the package from a registry; from a
    // tarball file, as here, it resolves the ranges afresh. So this checks the file itself: every
    // entry is the lockfile's, and every dependency of every entry is found inside it.
    const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as Lockfile;
    const shrinkwrap = JSON.parse(
      readFileSync(join(installDir, 'node_modules/@zekt/server/npm-shrinkwrap.json'), 'utf8'),
    ) as Lockfile;
    const paths = Object.keys(shrinkwrap.packages).filter((path) => path !== '');
    expect(paths).toContain('node_modules/better-sqlite3');
    expect(paths).not.toContain('node_modules/zekt-github-sim');
    for (const path of paths)
      expect(shrinkwrap.packages[path]!.version, path).toBe(lock.packages[path]?.version);
    const unresolved: string[] = [];
    for (const path of ['', ...paths]) {
      for (const name of Object.keys(shrinkwrap.packages[path]!.dependencies ?? {})) {
        const candidates = [];
        for (
          let dir = path;
          ;
          dir = dir.includes('/node_modules/') ? dir.slice(0, dir.lastIndexOf('/node_modules/')) : ''
        ) {
          candidates.push(`${dir ? `${dir}/` : ''}node_modules/${name}`);
          if (dir === '') break;
        }
        if (!candidates.some((candidate) => shrinkwrap.packages[candidate]))
          unresolved.push(`${path} → ${name}`);
      }
    }
    expect(unresolved).toEqual([]);
  });

  it('carries one version for the server, the action and the simulator, a changelog entry for it and honest engines', () => {
    const versionOf = (path: string) =>
      JSON.parse(readFileSync(join(repoRoot, path, 'package.json'), 'utf8')).version as string;
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(versionOf('packages/action')).toBe(manifest.version);
    expect(versionOf('packages/github-sim')).toBe(manifest.version);
    expect(readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8')).toContain(`\n## ${manifest.version}\n`);
    // Every Node major the package admits is one the native SQLite driver supports, and this
    // process's Node is admitted.
    const driver = JSON.parse(
      readFileSync(join(installDir, 'node_modules/better-sqlite3/package.json'), 'utf8'),
    ).engines.node as string;
    const admitted = majorsAdmitted(manifest.engines.node);
    expect(admitted.length).toBeGreaterThan(0);
    for (const major of admitted) expect(driver, `better-sqlite3 on Node ${major}`).toContain(`${major}.x`);
    expect(admitted).toContain(Number(process.versions.node.split('.')[0]));
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

  it('says where the bench lives when zekt bench runs from the package', async () => {
    const failure = await execFileAsync('npx', ['zekt', 'bench', '--events', '1'], { cwd: installDir }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr.trim()).toBe(
      'zekt bench runs from a clone of the repository, where the bench workspace lives: npm ci && npm run bench',
    );
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
      // Its own process group, which a terminal's Ctrl+C signals as a whole.
      detached: true,
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

    // SIGTERM to the group, as a terminal's Ctrl+C sends SIGINT: zekt stops, then npx ends.
    const exited = new Promise<[number | null, string | null]>((done) =>
      server!.once('exit', (code, signal) => done([code, signal])),
    );
    process.kill(-server.pid!, 'SIGTERM');
    expect([
      [0, null],
      [null, 'SIGTERM'],
    ]).toContainEqual(await exited);
    await eventually(
      () =>
        fetch(`${url}/healthz`).then(
          () => undefined,
          () => true,
        ),
      20_000,
    );
  }, 180_000);
});
