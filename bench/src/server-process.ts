import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Environment } from '@zekt/server/dist/config.js';
import { stopWithBench } from './child-processes.js';

/** A `zekt serve` child process the bench loads, and what the kernel says about its memory. */
export interface ServerProcess {
  url: string;
  pid: number;
  /** Peak and current resident set size (Linux `/proc`; null elsewhere). */
  memory(): { peakRssBytes: number | null; rssBytes: number | null };
  /**
   * How long the service took to answer each request to `path` since the last call, from its own
   * request log (Fastify's `responseTime`: request read → response written, at `LOG_LEVEL=info`).
   */
  takeResponseTimes(method: string, path: string): number[];
  stop(): Promise<void>;
}

export async function startServerProcess(input: {
  cli: string;
  env: Environment;
  url: string;
  startTimeoutMs?: number;
  /** `--role api|worker` (default: all roles). A worker has no URL to wait for: `url` is null. */
  role?: 'api' | 'worker' | 'all';
  /** Node options of the child, e.g. `--cpu-prof` to profile it under load. */
  execArgv?: string[];
  /**
   * A command the child runs under, with its arguments: `['valgrind', '--tool=callgrind', …]`
   * starts `valgrind … node …` (instruction-count.ts).
   */
  wrapper?: readonly string[];
  /** False: the request log is not read (stdout goes nowhere), for loads where reading it would cost the bench. */
  readRequestLog?: boolean;
}): Promise<ServerProcess> {
  const readLog = input.readRequestLog ?? true;
  const child = stopWithBench(
    spawn(
      input.wrapper?.[0] ?? process.execPath,
      [
        ...(input.wrapper ? [...input.wrapper.slice(1), process.execPath] : []),
        ...(input.execArgv ?? []),
        input.cli,
        'serve',
        ...(input.role ? ['--role', input.role] : []),
      ],
      {
        env: input.env as NodeJS.ProcessEnv,
        stdio: ['ignore', readLog ? 'pipe' : 'ignore', 'pipe'],
      },
    ),
  );
  const requestLog = watchRequestLog(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const deadline = Date.now() + (input.startTimeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`zekt serve exited with ${child.exitCode}: ${stderr.trim()}`);
    if (input.role === 'worker') {
      if (stderr.includes('zekt worker running')) break;
    } else {
      try {
        if ((await fetch(`${input.url}/readyz`)).ok) break;
      } catch {
        // not listening yet
      }
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`zekt serve did not become ready at ${input.url}: ${stderr.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: input.url,
    pid: child.pid ?? 0,
    memory: () => ({
      peakRssBytes: procStatusBytes(child, 'VmHWM'),
      rssBytes: procStatusBytes(child, 'VmRSS'),
    }),
    takeResponseTimes: requestLog.take,
    stop: () => stopChild(child),
  };
}

/** The response time of each request, by route, from Zekt's access line (`request completed`). */
function watchRequestLog(child: ChildProcess) {
  const times = new Map<string, number[]>();
  if (child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      let entry: {
        msg?: string;
        req?: { method?: string; url?: string };
        responseTime?: number;
      };
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.msg !== 'request completed' || !entry.req || typeof entry.responseTime !== 'number') return;
      const route = `${entry.req.method} ${entry.req.url?.split('?')[0]}`;
      times.set(route, [...(times.get(route) ?? []), entry.responseTime]);
    });
  }
  return {
    take(method: string, path: string): number[] {
      const key = `${method} ${path}`;
      const taken = times.get(key) ?? [];
      times.delete(key);
      return taken;
    },
  };
}

/** A field of /proc/<pid>/status in bytes (VmHWM: peak RSS; VmRSS: RSS now), or null off Linux. */
export function procStatusBytes(child: ChildProcess, field: string): number | null {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** SIGTERM, then SIGKILL after 10 s; resolves once the child has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
