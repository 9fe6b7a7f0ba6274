import { describe, expect, it } from 'vitest';
import type { CompareReport } from '../src/compare-report.js';
import { runBench } from './run-bench-cli.js';

/**
 * `zekt bench --compare` as an operator runs it, on its three reference targets: what is checked is how it
 * measures (in rounds, in turn, the medians judged), never how fast this shared machine was.
 */
describe('zekt bench --compare', () => {
  it('compares targets in rounds, in turn, and reports each round with the medians it judges', {
    timeout: 120_000,
  }, async () => {
    const result = await runBench([
      '--compare',
      '--only',
      'ceiling,naive,bare-durable',
      '--rounds',
      '2',
      '--warm-up',
      '50',
      '--events',
      '100',
      '--rates',
      '500',
      '--records',
      '0',
      '--json',
    ]);
    expect(result.stderr).not.toContain('    at ');
    // Zekt's targets were not run: their verdicts are "not measured", so missed.
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as CompareReport;
    expect(report.rounds).toBe(2);
    expect(report.warmUp).toBe(50);
    expect(report.targets.map((t) => t.key)).toEqual(['ceiling', 'naive', 'bare-durable']);
    for (const target of report.targets) {
      expect(target.rounds).toHaveLength(2);
      const acks = (target.rounds ?? []).map((r) => r.ackPerSecond);
      expect(target.ackPerSecond).toBe(Math.round(((acks[0] ?? 0) + (acks[1] ?? 0)) * 5) / 10);
      expect(target.latency.map((p) => p.offeredRate)).toEqual([500]);
      expect(target.latency[0]?.p99Rounds).toHaveLength(2);
      expect(target.latency[0]?.e2e.count).toBe(2000);
      // Where the CPU went in its closed loops (Linux /proc): the target's process and the bench's
      // own threads both worked for every webhook.
      expect(target.cpuPerEvent?.target).toBeGreaterThan(0);
      expect(target.cpuPerEvent?.bench).toBeGreaterThan(0);
      expect(target.cpuPerEvent?.rest).not.toBeNull();
    }
    for (const router of report.targets.slice(1)) {
      expect(router.lost).toBe(0);
      expect(router.deliveredPerSecond).toBeGreaterThan(0);
    }
    // In turn: each round measured both targets before the next began.
    const order = [...result.stderr.matchAll(/^(.+) \(round (\d) of 2\): warming up \(50 webhooks\)$/gm)].map(
      (m) => `${m[2]} ${m[1]}`,
    );
    expect(order).toEqual([
      '1 ceiling: node:http, HMAC + 202',
      '1 naive Octokit router (no persistence)',
      '1 bare durable router (SQLite, no retries)',
      '2 ceiling: node:http, HMAC + 202',
      '2 naive Octokit router (no persistence)',
      '2 bare durable router (SQLite, no retries)',
    ]);
  });
});
