import { readdirSync, readFileSync } from 'node:fs';

/**
 * Where the machine's CPU went while a target took its closed loop, in milliseconds of CPU per
 * webhook: the target's own processes, PostgreSQL's, the bench's (the load generator's threads and
 * the GitHub simulator), and the rest of the machine (the kernel's network work done on
 * interrupts, and other processes).
 *
 * Why the bench reports it: on one machine every figure is a share of the same cores. The load
 * generator and the simulator take a third of them under durable Zekt (docs/performance.md), and a
 * ratio between two targets is a ratio of everything each event costs, the bench's share included.
 * Whoever wants a target to go faster needs to know which process to make cheaper.
 *
 * Read from Linux's `/proc` (null elsewhere): a process's `utime` + `stime` (all its threads),
 * PostgreSQL as every process named `postgres` on this machine (a local server, as `zekt bench
 * --database-url` is given one; a remote one reads as null), the machine as `/proc/stat`'s busy
 * time without `steal` (time the hypervisor gave to other machines). A process that exits during
 * the loop takes its CPU time with it; the loop's processes (the target, the pool's backends)
 * live through it.
 */
export interface CpuPerEvent {
  target: number | null;
  postgres: number | null;
  bench: number;
  rest: number | null;
}

/** CPU milliseconds used so far, by whom. */
export interface CpuSnapshot {
  target: number | null;
  postgres: number | null;
  bench: number;
  machine: number | null;
}

/** `USER_HZ`, the unit of `/proc`'s CPU times: 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;
const MS_PER_TICK = 1000 / TICKS_PER_SECOND;

/**
 * `utime + stime` of a `/proc/<pid>/stat` line, in milliseconds. The command name (field 2) is in
 * parentheses and may itself hold spaces and parentheses: fields are counted from the last `)`.
 */
export function processStatCpuMs(stat: string): number | null {
  const close = stat.lastIndexOf(')');
  if (close === -1) return null;
  // After ") ": state (3), ppid … utime (14), stime (15).
  const fields = stat.slice(close + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) * MS_PER_TICK : null;
}

/** Busy time of the `cpu` line of `/proc/stat` in milliseconds: everything but idle, iowait and steal. */
export function machineStatBusyMs(stat: string): number | null {
  const line = stat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return null;
  // user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const [user, nice, system, , , irq, softirq] = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = [user, nice, system, irq, softirq];
  if (busy.some((v) => v === undefined || !Number.isFinite(v))) return null;
  return (busy as number[]).reduce((a, b) => a + b, 0) * MS_PER_TICK;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function processCpuMs(pid: number): number | null {
  const stat = readOrNull(`/proc/${pid}/stat`);
  return stat === null ? null : processStatCpuMs(stat);
}

/** Every `postgres` process's CPU time, summed; null when there is none to read. */
function postgresCpuMs(): number | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  let total: number | null = null;
  for (const pid of pids) {
    if (readOrNull(`/proc/${pid}/comm`)?.trim() !== 'postgres') continue;
    const ms = processCpuMs(Number(pid));
    if (ms !== null) total = (total ?? 0) + ms;
  }
  return total;
}

/** What each has used so far; `targetPids` are the target's processes. */
export function cpuSnapshot(targetPids: readonly number[]): CpuSnapshot {
  const perTarget = targetPids.map(processCpuMs);
  const usage = process.cpuUsage();
  const machine = readOrNull('/proc/stat');
  return {
    target:
      perTarget.length === 0 || perTarget.some((ms) => ms === null)
        ? null
        : (perTarget as number[]).reduce((a, b) => a + b, 0),
    postgres: postgresCpuMs(),
    bench: (usage.user + usage.system) / 1000,
    machine: machine === null ? null : machineStatBusyMs(machine),
  };
}

/**
 * Milliseconds of CPU per event between two snapshots, to two decimals. The rest is the machine's
 * busy time less the three (never below 0: the counters are read one after the other, a tick apart).
 */
export function cpuPerEvent(before: CpuSnapshot, after: CpuSnapshot, events: number): CpuPerEvent | null {
  if (events <= 0) return null;
  const spent = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  const per = (ms: number | null) => (ms === null ? null : Math.round((ms / events) * 100) / 100);
  const target = spent(before.target, after.target);
  const postgres = spent(before.postgres, after.postgres);
  const bench = after.bench - before.bench;
  const machine = spent(before.machine, after.machine);
  const rest =
    machine === null || target === null ? null : Math.max(0, machine - target - (postgres ?? 0) - bench);
  return { target: per(target), postgres: per(postgres), bench: per(bench) ?? 0, rest: per(rest) };
}

/** `target 1.23 · PostgreSQL 0.45 · bench 0.98 · rest 0.10 ms` (a dash where `/proc` could not tell). */
export function formatCpuPerEvent(cpu: CpuPerEvent): string {
  const ms = (v: number | null) => (v === null ? '—' : v.toFixed(2));
  return `target ${ms(cpu.target)} · PostgreSQL ${ms(cpu.postgres)} · bench ${ms(cpu.bench)} · rest ${ms(cpu.rest)} ms`;
}
