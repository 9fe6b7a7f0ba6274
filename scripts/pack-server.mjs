// `npm pack -w apps/server` (and `npm publish`) run this before and after packing the server:
//
//   prepack   checks that the build is complete and current, then copies the built console into
//             apps/server/console/ and the repository's CHANGELOG.md beside it, so the package
//             serves the console with no other workspace installed, and writes
//             apps/server/npm-shrinkwrap.json: the server's dependencies as package-lock.json
//             resolves them, so an install gets the tree the tests ran (the root's `overrides`
//             keep some of it on versions that run on Node 20; npm applies overrides only in the
//             project that declares them, and a package's shrinkwrap wherever it is installed)
//   postpack  removes those files again
//
// It never builds: tests pack while other tests run the built server, so nothing here may touch
// apps/server/dist. A compiled file whose source is gone (a stale build) stops the pack instead.
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const server = join(root, 'apps/server');
const consoleBuild = join(root, 'apps/console/dist');
const copies = [
  { from: consoleBuild, to: join(server, 'console') },
  { from: join(root, 'CHANGELOG.md'), to: join(server, 'CHANGELOG.md') },
];
const shrinkwrap = join(server, 'npm-shrinkwrap.json');

function fail(message) {
  process.stderr.write(`npm pack -w apps/server: ${message}\n`);
  process.exit(1);
}

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

function prepack() {
  const dist = join(server, 'dist');
  if (!existsSync(join(dist, 'cli/main.js')) || !existsSync(join(consoleBuild, 'index.html')))
    fail('the server or the console is not built: run `npm run build` at the repository root first');
  const stale = files(dist)
    .filter((file) => file.endsWith('.js'))
    .map((file) => relative(dist, file).replace(/\.js$/, '.ts'))
    .filter((source) => !existsSync(join(server, 'src', source)));
  if (stale.length > 0)
    fail(
      `apps/server/dist holds compiled files whose sources are gone (${stale.slice(0, 3).join(', ')}…): remove apps/server/dist and run \`npm run build\``,
    );
  const shipped = files(join(server, 'src')).filter((file) => !/\.(test|contract)\.ts$/.test(file));
  if (newest(shipped) > newest(files(dist)))
    fail('apps/server/src changed after the last build: run `npm run build` first');
  for (const { from, to } of copies) {
    rmSync(to, { recursive: true, force: true });
    cpSync(from, to, { recursive: true });
  }
  writeFileSync(shrinkwrap, `${JSON.stringify(serverShrinkwrap(), null, 2)}\n`);
}

/**
 * The lockfile entries the server needs at run time: its dependencies, theirs, and so on, each
 * found as Node finds it (the nearest node_modules/<name> up from the package that needs it).
 * Every entry of the repository's lockfile lives under the root's node_modules/, so its path is
 * the same below the package's own root.
 */
function serverShrinkwrap() {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const entries = lock.packages;
  const manifest = entries['apps/server'];
  const needed = new Map();
  const visit = (from, { name, optional }) => {
    for (let dir = from; ; dir = parentOf(dir)) {
      const path = `${dir ? `${dir}/` : ''}node_modules/${name}`;
      if (entries[path]) {
        if (!needed.has(path)) {
          needed.set(path, entries[path]);
          for (const dependency of requires(entries[path])) visit(path, dependency);
        }
        return;
      }
      if (dir === '') {
        if (!optional) fail(`package-lock.json has no ${name} for ${from || 'apps/server'}: run npm install`);
        return;
      }
    }
  };
  for (const dependency of requires(manifest)) visit('', dependency);
  const packages = { '': { ...manifest, devDependencies: undefined } };
  // The repository's flags (dev, devOptional, peer) say how its own tree needs an entry.
  const ownFlags = new Set(['dev', 'devOptional', 'peer']);
  for (const path of [...needed.keys()].sort()) {
    packages[path] = Object.fromEntries(
      Object.entries(needed.get(path)).filter(([key]) => !ownFlags.has(key)),
    );
  }
  return { name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages };
}

/** What an installed package brings along: its dependencies, optional ones and required peers. */
function requires(entry) {
  const optionalPeer = (name) => entry.peerDependenciesMeta?.[name]?.optional === true;
  return [
    ...Object.keys(entry.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(entry.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    ...Object.keys(entry.peerDependencies ?? {})
      .filter((name) => !optionalPeer(name))
      .map((name) => ({ name, optional: false })),
  ];
}

/** `node_modules/a/node_modules/b` → `node_modules/a`; `node_modules/a` → the root (''). */
function parentOf(path) {
  const at = path.lastIndexOf('/node_modules/');
  return at < 0 ? '' : path.slice(0, at);
}

function newest(paths) {
  return Math.max(0, ...paths.map((file) => statSync(file).mtimeMs));
}

function postpack() {
  for (const { to } of copies) rmSync(to, { recursive: true, force: true });
  rmSync(shrinkwrap, { force: true });
}

const step = process.argv[2];
if (step === 'prepack') prepack();
else if (step === 'postpack') postpack();
else fail(`unknown step ${step}: prepack or postpack`);
