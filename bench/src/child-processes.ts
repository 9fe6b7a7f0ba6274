import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';

/**
 * The processes the bench starts (each target's servers, the workers of the scale-out scenario)
 * are stopped with it. Ctrl-C reaches the whole process group, so they stopped anyway; but a
 * signal sent to the bench alone (`kill <pid>`, `pkill -f "bench --compare"`, a CI job's timeout)
 * used to leave them running, idle, beside every later measurement on the machine. Now the bench
 * passes SIGTERM to each child it started (they shut down as `zekt serve` does) and exits with the
 * signal's status. A bench killed with SIGKILL still cannot: nothing runs in a process that is
 * killed so.
 */
const running = new Set<ChildProcess>();
let listening = false;

const STOPPING_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Stops `child` with the bench if the bench is stopped by a signal; returns it. */
export function stopWithBench(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (!listening) {
    listening = true;
    for (const signal of STOPPING_SIGNALS) process.once(signal, () => stopAll(signal));
  }
  return child;
}

function stopAll(signal: (typeof STOPPING_SIGNALS)[number]): void {
  for (const child of running) child.kill('SIGTERM');
  process.exit(128 + constants.signals[signal]);
}
