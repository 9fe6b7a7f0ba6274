// Builds the console into dist/: one ES module bundle, the page and the style sheet. The server
// serves dist/ at / (apps/server/src/http/routes/console.ts). No framework: the views are small
// and render with the DOM API, so nothing the API returns is ever parsed as HTML.
import { copyFileSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const dist = resolve(root, 'dist');
mkdirSync(dist, { recursive: true });
await build({
  absWorkingDir: root,
  entryPoints: ['src/main.ts'],
  outfile: resolve(dist, 'app.js'),
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
  charset: 'utf8',
  logLevel: 'warning',
});
for (const file of ['index.html', 'styles.css'])
  copyFileSync(resolve(root, 'src', file), resolve(dist, file));
