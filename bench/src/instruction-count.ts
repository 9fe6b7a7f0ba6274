import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FAST_CONSUMER, startZekt, type ZektTarget } from './comparison-targets.js';
import { measureLoad } from './run-compare.js';

/**
 * Instructions per webhook of durable Zekt's process, counted by valgrind's callgrind: a measure
 * that repeats where CPU time does not. On the shared 2-core machines `zekt bench --compare` runs
 * on, the naive router's CPU per webhook ranged from 0.68 to 0.93 ms in runs minutes apart
 * (30 November), so a change worth 5 % cannot be seen in CPU time; five counts of one build on the
 * main thread were within 2 % of each other (3.224–3.284 million instructions a webhook).
 *
 * `zekt serve` (all roles, durable delivery to the bench's one fast consumer) runs under
 * `valgrind --tool=callgrind`, tens of times slower. A closed-loop warm-up over 32 connections
 * lets V8 optimise the webhook path; then the counters are zeroed (`callgrind_control -z`), the
 * measured webhooks are sent over one connection, so that every group commit holds one webhook
 * whatever the timing, each is waited for until its dispatch reached the simulator, and the
 * counters are dumped (`callgrind_control -d`).
 *
 * What it does not show (docs/performance.md, *How to reproduce*): PostgreSQL's own work (only
 * Zekt's process is counted; on PostgreSQL it is the driver's side), time spent waiting, cache
 * misses, and code whose instructions differ under valgrind: OpenSSL's SHA-256 runs its AVX2 code,
 * not the SHA extensions a native run uses, so the HMAC weighs several times what it does natively.
 */
export interface InstructionCountOptions {
  /** Webhooks counted, sent one at a time. */
  events: number;
  /** Webhooks sent before counting, over 32 connections. */
  warmUp: number;
  /** A throwaway PostgreSQL database; unset: SQLite. */
  databaseUrl?: string | undefined;
  /**
   * A directory to write callgrind's dumps to and leave them in, for `callgrind_annotate` to say
   * where the counted instructions went; unset: a temporary directory, removed after the count.
   */
  keepDumpsIn?: string | undefined;
  progress?: (line: string) => void;
}

export interface InstructionCount {
  events: number;
  warmUp: number;
  store: 'SQLite' | 'PostgreSQL';
  /** Instructions per webhook on the main thread (the event loop). */
  mainThread: number;
  /**
   * Instructions per webhook on every thread (V8's compiler and GC helpers, libuv's pool, the WAL
   * checkpointer). It does not repeat (4.6–6.3 M a webhook in five counts of one build): how much
   * of V8's optimising falls in the counted window varies.
   */
  allThreads: number;
}

const execFileAsync = promisify(execFile);
/** Under callgrind `zekt serve` starts in one to two minutes. */
const START_TIMEOUT_MS = 10 * 60_000;
const SETTLE_MS = 10 * 60_000;

export async function runInstructionCount(options: InstructionCountOptions): Promise<InstructionCount> {
  const progress = options.progress ?? (() => {});
  await requireCallgrind();
  const outDir = options.keepDumpsIn ?? mkdtempSync(join(tmpdir(), 'zekt-callgrind-'));
  if (options.keepDumpsIn) mkdirSync(outDir, { recursive: true });
  let target: ZektTarget | undefined;
  try {
    progress('starting zekt serve under callgrind (a minute or two)…');
    target = await startZekt({
      name: 'Zekt, durable, under callgrind',
      consumers: [FAST_CONSUMER],
      durable: true,
      ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
      env: { ZEKT_INSTALLATION_CONCURRENCY: '32' },
      wrapper: [
        'valgrind',
        '--tool=callgrind',
        '--separate-threads=yes',
        `--vgdb-prefix=${join(outDir, 'vgdb')}`,
        `--callgrind-out-file=${join(outDir, 'callgrind.out.%p')}`,
      ],
      startTimeoutMs: START_TIMEOUT_MS,
    });
    const [pid] = target.pids();
    if (pid === undefined) throw new Error('zekt serve did not start');
    // vgdb names its pipes after the user and the host of the valgrind process (LOGNAME or USER,
    // HOST or HOSTNAME): callgrind_control must see the same values to find them.
    const controlEnv = { ...process.env } as Record<string, string | undefined>;
    for (const name of ['LOGNAME', 'USER', 'HOST', 'HOSTNAME']) controlEnv[name] = target.env[name];
    const control = (command: string) =>
      execFileAsync('callgrind_control', [`--vgdb-prefix=${join(outDir, 'vgdb')}`, command, String(pid)], {
        env: controlEnv as NodeJS.ProcessEnv,
      });
    progress(`warming up (${options.warmUp} webhooks over 32 connections)…`);
    await settledLoad(target, options.warmUp, 32);
    await control('-z');
    progress(`counting ${options.events} webhooks, one at a time…`);
    await settledLoad(target, options.events, 1);
    await control('-d');
    const totals = countedDumps(readdirSync(outDir), pid).map(({ name, thread }) => ({
      thread,
      instructions: callgrindTotal(readFileSync(join(outDir, name), 'utf8')),
    }));
    const main = totals.find((t) => t.thread === 1);
    if (!main) throw new Error(`callgrind wrote no dump of the main thread in ${outDir}`);
    return {
      events: options.events,
      warmUp: options.warmUp,
      store: options.databaseUrl ? 'PostgreSQL' : 'SQLite',
      mainThread: Math.round(main.instructions / options.events),
      allThreads: Math.round(totals.reduce((sum, t) => sum + t.instructions, 0) / options.events),
    };
  } finally {
    await target?.stop();
    if (!options.keepDumpsIn) rmSync(outDir, { recursive: true, force: true });
  }
}

/** Sends the webhooks and waits for every acknowledged one's dispatch; fails when any is missing. */
async function settledLoad(target: ZektTarget, count: number, connections: number): Promise<void> {
  const measured = await measureLoad(target, { count, rate: 0, connections, settleMs: SETTLE_MS });
  if (measured.acknowledged !== count || measured.delivered !== count) {
    throw new Error(
      `of ${count} webhooks ${measured.acknowledged} were acknowledged and ${measured.delivered} dispatched`,
    );
  }
}

async function requireCallgrind(): Promise<void> {
  try {
    await execFileAsync('valgrind', ['--version']);
    await execFileAsync('callgrind_control', ['--version']);
  } catch {
    throw new Error(
      'valgrind and callgrind_control are needed (Debian and Ubuntu: apt-get install valgrind)',
    );
  }
}

/**
 * The dumps of the counted window among a directory's files, with their threads: the first dump
 * (`-d`) of process `pid`, one file per thread (`callgrind.out.<pid>.1-<thread>`). The final
 * dumps written when the process ends, and a kept directory's dumps of earlier counts, are not.
 *
 * @example countedDumps(['callgrind.out.7.1-01', 'callgrind.out.7-01'], 7) // [{ name: 'callgrind.out.7.1-01', thread: 1 }]
 */
export function countedDumps(names: readonly string[], pid: number): Array<{ name: string; thread: number }> {
  const pattern = new RegExp(`^callgrind\\.out\\.${pid}\\.1-(\\d+)$`);
  return names.flatMap((name) => {
    const match = pattern.exec(name);
    return match ? [{ name, thread: Number(match[1]) }] : [];
  });
}

/**
 * The instruction count of a callgrind dump: its `totals:` line, or (older versions) `summary:`.
 *
 * @example callgrindTotal('events: Ir\nsummary: 42\ntotals: 42\n') // 42
 */
export function callgrindTotal(dump: string): number {
  const line = /^totals:\s*(\d+)/m.exec(dump) ?? /^summary:\s*(\d+)/m.exec(dump);
  if (!line?.[1]) throw new Error('not a callgrind dump: no totals line');
  return Number(line[1]);
}

export function formatInstructionCount(count: InstructionCount): string {
  const millions = (n: number) => `${(n / 1e6).toFixed(3)} M`;
  return [
    `instructions per webhook, durable Zekt (${count.store}), ${count.events} webhooks one at a time after a warm-up of ${count.warmUp}:`,
    `  main thread  ${millions(count.mainThread)}`,
    `  all threads  ${millions(count.allThreads)} (V8's background compiling included: does not repeat)`,
  ].join('\n');
}
