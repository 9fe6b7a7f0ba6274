#!/usr/bin/env node
// The `zekt-github-sim` command. This file is committed (the build is not) so that `npm ci` links
// node_modules/.bin/zekt-github-sim in a fresh clone, before anything is built: npm skips a bin
// whose file does not exist at install time (apps/server/bin/zekt.js does the same for `zekt`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  process.stderr.write(
    `zekt-github-sim is not built yet (${fileURLToPath(cli)} is missing): run \`npm run build\` at the repository root first\n`,
  );
  process.exit(1);
}
await import(cli.href);
