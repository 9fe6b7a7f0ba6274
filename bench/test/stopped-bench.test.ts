import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = resolve(import.meta.dirname, '../../apps/server/dist/cli/main.js');

/** The pids of `pid`'s children (Linux: /proc/<pid>/task/<tid>/children). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** True while `pid` runs (a zombie, exited but not yet reaped by its parent, does not count). */
function runs(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
  return state !== 'Z' && state !== 'X';
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `zekt bench` stopped by a signal sent to it alone (`kill`, `pkill -f`, a CI timeout), not to its
 * process group as Ctrl-C is: the target processes it started stop with it, instead of running on
 * beside every later measurement (bench/src/child-processes.ts).
 */
describe('zekt bench stopped by a signal', () => {
  it.each(['SIGTERM', 'SIGHUP'] as const)(
    'stops the targets it started (%s)',
    { timeout: 60_000 },
    async (signal) => {
      // Stopped in its open loop at 10 webhooks/s, which lasts 20 s.
      const bench = spawn(
        process.execPath,
        [
          cli,
          'bench',
          '--compare',
          '--only',
          'ceiling',
          '--rounds',
          '1',
          '--warm-up',
          '0',
          '--events',
          '50',
          '--rates',
          '10',
          '--records',
          '0',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      bench.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
      });
      bench.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
        bench.once('exit', (code, sig) => done({ code, signal: sig })),
      );
      try {
        const pid = bench.pid as number;
        await until('the open loop to start', () => (output.includes('acknowledged') ? true : undefined));
        const targets = childrenOf(pid);
        expect(targets.length, output).toBeGreaterThan(0);
        expect(targets.every(runs)).toBe(true);

        process.kill(pid, signal);
        const ended = await exited;
        // It exits with the signal's status, as a process the signal had ended would report.
        expect(ended.code, output).toBe(signal === 'SIGTERM' ? 143 : 129);
        await until('the targets to stop', () => (targets.some(runs) ? undefined : true), 15_000);
      } finally {
        bench.kill('SIGKILL');
      }
    },
  );
});
