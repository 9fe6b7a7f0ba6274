import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { SimulatorCoordinates } from '../../src/cli/simulator-environment.js';
import { eventually } from './harness.js';

/**
 * The built `zekt` and `zekt-github-sim` as separate processes, for end-to-end tests: they talk over
 * loopback HTTP only, like a deployment.
 */
const repoRoot = resolve(import.meta.dirname, '../../../..');
export const serverCli = join(repoRoot, 'apps/server/dist/cli/main.js');
export const simCli = join(repoRoot, 'packages/github-sim/dist/cli.js');

export interface SimProcessInfo extends SimulatorCoordinates {
  url: string;
}

export class ProcessGroup {
  private readonly children: ChildProcess[] = [];

  constructor() {
    for (const built of [serverCli, simCli]) {
      if (!existsSync(built))
        throw new Error(`${built} is missing: run \`npm run build\` (npm test does) first`);
    }
  }

  start(args: string[], env: Record<string, string> = {}): ChildProcess {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.push(child);
    keepOutputTail(child);
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('exit', (code, signal) => {
      if (code !== 0 && code !== null && signal === null)
        process.stderr.write(`${args.join(' ')} exited ${code}: ${stderr}\n`);
    });
    return child;
  }

  /** Starts the simulator CLI on a free port and reads the coordinates it prints. */
  async startSimulator(): Promise<SimProcessInfo> {
    const child = this.start([simCli, 'serve', '--port', '0', '--allow-private-hook-urls']);
    const line = await new Promise<string>((done, fail) => {
      createInterface({ input: child.stdout! }).once('line', done);
      child.once('exit', (code) => fail(new Error(`the simulator exited with ${code}`)));
    });
    return JSON.parse(line) as SimProcessInfo;
  }

  /** Starts `zekt serve` and waits until it is ready. */
  async startZekt(url: string, env: Record<string, string>, args: string[] = []): Promise<ChildProcess> {
    // Another server still answering on this URL would pass the readiness check for the new one.
    const stale = await fetch(`${url}/healthz`).then(
      () => true,
      () => false,
    );
    if (stale) throw new Error(`a server already answers at ${url}: stop it before starting another one`);
    // Tests share the machine: a free metrics port unless the test chose one.
    const child = this.start([serverCli, 'serve', ...args], { ZEKT_METRICS_PORT: '0', ...env });
    watchStderr(child);
    // Nobody reads its log: drain it, or a full pipe blocks pino's flush at exit and the process
    // never ends (seen after a long crash ledger's many dispatch warnings).
    child.stdout?.resume();
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`zekt serve exited with ${child.exitCode}`);
      try {
        return (await fetch(`${url}/readyz`)).ok ? true : undefined;
      } catch {
        return undefined;
      }
    }, 20_000);
    return child;
  }

  /**
   * Starts `zekt serve` (`--role api` or all roles), waits until it is ready, and resolves with the
   * URL of its private metrics port too (`/metrics`, `/healthz`, `/readyz`), read from its start line.
   */
  async startZektWithMetrics(
    url: string,
    env: Record<string, string>,
    args: string[] = [],
  ): Promise<{ child: ChildProcess; metricsUrl: string }> {
    const child = await this.startZekt(url, env, args);
    const metricsUrl = await lineOf(child, /zekt (?:api|all) listening on \S+, metrics on (\S+)/);
    return { child, metricsUrl };
  }

  /**
   * Starts `zekt serve` without a GitHub App (setup mode): it is alive (`/healthz`) but not ready,
   * and prints the setup URL, which this resolves with.
   */
  async startZektInSetupMode(
    env: Record<string, string>,
    args: string[] = [],
  ): Promise<{ child: ChildProcess; setupUrl: string }> {
    const child = this.start([serverCli, 'serve', ...args], { ZEKT_METRICS_PORT: '0', ...env });
    child.stdout?.resume();
    const setupUrl = await lineOf(child, /^\s+(http\S+\/setup\?code=\S+)$/m);
    return { child, setupUrl };
  }

  /** Starts `zekt serve --role worker` and waits until its loops run. */
  async startWorker(env: Record<string, string>): Promise<ChildProcess> {
    return (await this.startProbedWorker(env)).child;
  }

  /**
   * Starts `zekt serve --role worker` (its probe port a free one unless `ZEKT_METRICS_PORT` is
   * given) and resolves with the URL it serves `/healthz`, `/readyz` and `/metrics` on.
   */
  async startProbedWorker(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
    const child = this.start([serverCli, 'serve', '--role', 'worker'], { ZEKT_METRICS_PORT: '0', ...env });
    child.stdout?.resume();
    const url = await lineOf(child, /zekt worker running, probes and metrics on (\S+)/);
    return { child, url };
  }

  /** What a child started here wrote to standard error so far. */
  stderrOf(child: ChildProcess): string {
    return (stderrOf.get(child) ?? watchStderr(child)).text;
  }

  /** Runs a `zekt` command to completion and returns its standard output. */
  async run(args: string[], env: Record<string, string>): Promise<string> {
    const child = this.start([serverCli, ...args], env);
    let stdout = '';
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
    });
    const code = await new Promise<number | null>((done) => child.on('exit', done));
    if (code !== 0) throw new Error(`zekt ${args.join(' ')} exited ${code}`);
    return stdout;
  }

  /** SIGKILL: no shutdown hooks, no flushing — a crash. */
  async kill(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGKILL');
    await exited;
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      this.children
        .filter((child) => child.exitCode === null && child.signalCode === null)
        .map(
          (child) =>
            new Promise((done) => {
              child.once('exit', done);
              child.kill('SIGTERM');
            }),
        ),
    );
  }
}

const outputTails = new WeakMap<ChildProcess, { text: string }>();
/** How much of a child's output a failing test can show: its last lines, not its whole log. */
const OUTPUT_TAIL_CHARS = 16_384;

/** Keeps the end of what a child writes (standard output and error), for a failure to show. */
function keepOutputTail(child: ChildProcess): void {
  const tail = { text: '' };
  outputTails.set(child, tail);
  const keep = (chunk: Buffer | string) => {
    tail.text = (tail.text + chunk).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
}

/**
 * The last lines a child wrote: for a test's failure message, so a failure in CI says what the
 * process saw (the processes' logs are otherwise drained and never shown).
 */
export function outputTail(child: ChildProcess, lines = 20): string {
  return (outputTails.get(child)?.text ?? '')
    .split('\n')
    .slice(-lines - 1)
    .join('\n');
}

const stderrOf = new WeakMap<ChildProcess, { text: string; waiters: Set<() => void> }>();

/** Keeps what a child writes to standard error, from its start, for `lineOf`. */
function watchStderr(child: ChildProcess) {
  const seen = { text: '', waiters: new Set<() => void>() };
  stderrOf.set(child, seen);
  const wake = () => {
    for (const waiter of [...seen.waiters]) waiter();
  };
  child.stderr?.on('data', (chunk) => {
    seen.text += chunk;
    wake();
  });
  child.once('exit', wake);
  return seen;
}

/** The first capture of `pattern` in the child's standard error, once it has been written. */
async function lineOf(child: ChildProcess, pattern: RegExp): Promise<string> {
  const seen = stderrOf.get(child) ?? watchStderr(child);
  for (;;) {
    const match = pattern.exec(seen.text);
    if (match) return match[1]!;
    if (child.exitCode !== null) throw new Error(`zekt exited with ${child.exitCode}: ${seen.text}`);
    await new Promise<void>((resolve) => {
      const done = () => {
        seen.waiters.delete(done);
        resolve();
      };
      seen.waiters.add(done);
    });
  }
}

/** A JSON answer that tests read field by field. */
// biome-ignore lint/suspicious/noExplicitAny: tests assert on the fields they read.
export type JsonBody = Record<string, any>;

/** JSON over HTTP, for the simulator's control API and Zekt's API. */
export async function json(method: string, url: string, body?: unknown, token?: string) {
  const response = await fetch(url, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: callers check responses field by field.
  return { status: response.status, body: (text ? JSON.parse(text) : null) as any };
}
