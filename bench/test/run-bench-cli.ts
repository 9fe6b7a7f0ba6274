import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const cli = resolve(import.meta.dirname, '../../apps/server/dist/cli/main.js');

/** `zekt bench …` from the build, as an operator runs it, without this shell's Zekt or GitHub settings. */
export async function runBench(args: string[]) {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(GITHUB_|ZEKT_|DATABASE_URL|PORT|NODE_ENV)/.test(name)),
  );
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, 'bench', ...args], {
      env: clean,
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
