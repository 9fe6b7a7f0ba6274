// Bundles the action into one file, dist/index.js, which is committed: a runner checks the
// repository out and runs it with `node`, without installing anything.
//
//   node scripts/bundle.mjs                 → dist/index.js (npm run build)
//   node scripts/bundle.mjs <outfile>       → elsewhere (the staleness test compares the two)
//
// ESM, because @actions/core 3 is ESM-only and the repository is ESM; package.json's
// `"type": "module"` makes Node load dist/index.js as a module. Bundled CommonJS dependencies
// (undici, tunnel) call `require` for Node's built-ins, which a module does not have: the banner
// provides one. The output depends only on the sources and the pinned esbuild version (no
// timestamps, no absolute paths, no minification, no source map), so rebuilding unchanged
// sources leaves the committed file byte-identical.
import { resolve } from 'node:path';
import { build } from 'esbuild';

const packageDir = resolve(import.meta.dirname, '..');
const outfile = resolve(process.argv[2] ?? resolve(packageDir, 'dist/index.js'));

await build({
  absWorkingDir: packageDir,
  entryPoints: ['src/index.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  // Runners use node24; the tests run the bundle on the repository's minimum, Node 20.19.
  target: 'node20.19',
  format: 'esm',
  banner: {
    js: "import { createRequire as __zektCreateRequire } from 'node:module';\nconst require = __zektCreateRequire(import.meta.url);",
  },
  legalComments: 'eof',
  charset: 'utf8',
  logLevel: 'warning',
});
