#!/usr/bin/env node
// The `zekt` command. This file is committed (the build is not) so that `npm ci` links
// node_modules/.bin/zekt in a fresh clone, before anything is built: npm skips a bin whose
// file does not exist at install time, and `npx zekt` would then look the name up in the registry.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write(
    `zekt is not built yet (${fileURLToPath(main)} is missing): run \`npm run build\` at the repository root first\n`,
  );
  process.exit(1);
}
await import(main.href);
