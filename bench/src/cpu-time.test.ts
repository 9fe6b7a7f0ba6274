import { describe, expect, it } from 'vitest';
import {
  type CpuSnapshot,
  cpuPerEvent,
  cpuSnapshot,
  formatCpuPerEvent,
  machineStatBusyMs,
  processStatCpuMs,
} from './cpu-time.js';

describe('CPU time from /proc', () => {
  it("reads utime + stime of a process's stat line, whatever its command name holds", () => {
    // Fields from the 3rd: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
    const rest = 'S 1 100 100 0 -1 4194560 2000 0 3 0 1234 56 0 0 20 0 11 0 5000 1000000 25000';
    expect(processStatCpuMs(`4242 (node) ${rest}`)).toBe(12_900);
    expect(processStatCpuMs(`4242 (a) b (c) ${rest}`)).toBe(12_900);
    expect(processStatCpuMs('not a stat line')).toBeNull();
  });

  it("reads the machine's busy time without idle, iowait and steal", () => {
    // user nice system idle iowait irq softirq steal guest guest_nice
    const stat = 'cpu  1000 20 300 90000 500 7 60 4000 0 0\ncpu0 500 10 150 45000 250 3 30 2000 0 0\n';
    expect(machineStatBusyMs(stat)).toBe((1000 + 20 + 300 + 7 + 60) * 10);
    expect(machineStatBusyMs('intr 1 2 3')).toBeNull();
  });

  it('divides what each used between two snapshots by the events, the rest being the machine less the three', () => {
    const before: CpuSnapshot = { target: 1000, postgres: 500, bench: 2000, machine: 10_000 };
    const after: CpuSnapshot = { target: 2500, postgres: 1100, bench: 2900, machine: 13_300 };
    expect(cpuPerEvent(before, after, 1000)).toEqual({ target: 1.5, postgres: 0.6, bench: 0.9, rest: 0.3 });
    // Read a tick apart, the counters can add up to more than the machine's: the rest is then 0.
    expect(cpuPerEvent(before, { ...after, machine: 12_000 }, 1000)?.rest).toBe(0);
    // Where /proc cannot tell (no local PostgreSQL, another system), a dash, never a guess.
    const noProc: CpuSnapshot = { target: null, postgres: null, bench: 2000, machine: null };
    const cpu = cpuPerEvent(noProc, { ...noProc, bench: 2600 }, 1000);
    expect(cpu).toEqual({ target: null, postgres: null, bench: 0.6, rest: null });
    expect(formatCpuPerEvent(cpu as NonNullable<typeof cpu>)).toBe(
      'target — · PostgreSQL — · bench 0.60 · rest — ms',
    );
    expect(cpuPerEvent(before, after, 0)).toBeNull();
  });

  it('reads this process and the machine from Linux /proc', () => {
    const before = cpuSnapshot([process.pid]);
    // Spins until the kernel says this process used 60 ms of CPU (however long that takes on a
    // busy machine): /proc, in ticks of 10 ms, must show at least 40 of them.
    const used = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };
    const until = used() + 60;
    while (used() < until) Math.sqrt(Math.random());
    const after = cpuSnapshot([process.pid]);
    expect((after.target ?? 0) - (before.target ?? 0)).toBeGreaterThanOrEqual(40);
    expect(after.bench - before.bench).toBeGreaterThanOrEqual(60);
    expect(after.machine).toBeGreaterThan(before.machine ?? Number.POSITIVE_INFINITY);
    expect(cpuSnapshot([2 ** 30]).target).toBeNull();
  });
});
