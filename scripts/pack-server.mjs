// `npm pack -w apps/server` (and `npm publish`) run this before and after packing the server:
//
//   prepack   checks that the build is complete and current, then copies the built console into
//             apps/server/console/ and the repository's CHANGELOG.md beside it, so the package
//             serves the console with no other workspace installed
//   postpack  removes those copies again
//
// It never builds: tests pack while other tests run the built server, so nothing here may touch
// apps/server/dist. A compiled file whose source is gone (a stale build) stops the pack instead.
import { cpSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const server = join(root, 'apps/server');
const consoleBuild = join(root, 'apps/console/dist');
const copies = [
  { from: consoleBuild, to: join(server, 'console') },
  { from: join(root, 'CHANGELOG.md'), to: join(server, 'CHANGELOG.md') },
];

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
  const shipped = files(join(server, 'src')).filter(
    (file) => !file.endsWith('.test.ts') && !file.includes(`${join('src', 'test-support')}`),
  );
  if (newest(shipped) > newest(files(dist)))
    fail('apps/server/src changed after the last build: run `npm run build` first');
  for (const { from, to } of copies) {
    rmSync(to, { recursive: true, force: true });
    cpSync(from, to, { recursive: true });
  }
}

function newest(paths) {
  return Math.max(0, ...paths.map((file) => statSync(file).mtimeMs));
}

function postpack() {
  for (const { to } of copies) rmSync(to, { recursive: true, force: true });
}

const step = process.argv[2];
if (step === 'prepack') prepack();
else if (step === 'postpack') postpack();
else fail(`unknown step ${step}: prepack or postpack`);
