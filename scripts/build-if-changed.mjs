// Runs a workspace's build only when one of its inputs is newer than its output, so `npm start`
// and `npm test` skip a bundle nothing changed since the last build.
//
//   node ../../scripts/build-if-changed.mjs --output dist/index.html --inputs src,index.html,… -- vite build
//
// Paths are relative to the working directory (the workspace, under npm run). Inputs are files or
// directories, walked whole; a missing output always builds.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const split = args.indexOf('--');
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 && at < split ? args[at + 1] : undefined;
};
const output = option('--output');
const inputs = option('--inputs')?.split(',') ?? [];
const command = args.slice(split + 1);
if (split < 0 || !output || inputs.length === 0 || command.length === 0) {
  process.stderr.write('usage: build-if-changed.mjs --output <file> --inputs <a,b,…> -- <command…>\n');
  process.exit(2);
}

function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const built = existsSync(output) ? statSync(output).mtimeMs : 0;
if (built > Math.max(...inputs.map(newest))) {
  process.stdout.write(`${output} is newer than its sources: not rebuilt\n`);
  process.exit(0);
}
const result = spawnSync(command[0], command.slice(1), {
  stdio: 'inherit',
  shell: process.platform === 'win32',
});
process.exit(result.status ?? 1);
