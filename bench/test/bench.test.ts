import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_STORE } from '../../apps/server/test/support/test-database.js';
import type { BenchReport } from '../src/bench-report.js';
import { runBench } from './run-bench-cli.js';

/**
 * `zekt bench` as an operator runs it, on the test's store. What is checked is that the bench
 * measures what it says — every run's webhook timed, every delivery followed to Completed, the
 * service's own memory read — never how fast this shared machine happened to be: the targets are
 * the bench's verdict, not the test's (`--report-only`).
 */
let database: Awaited<ReturnType<typeof createTestDatabase>> | null = null;

beforeAll(async () => {
  database = TEST_STORE === 'postgres' ? await createTestDatabase() : null;
});
afterAll(async () => {
  await database?.drop();
});

describe('zekt bench', () => {
  it('drives provider runs through the whole path and reports every measurement', {
    timeout: 120_000,
  }, async () => {
    const result = await runBench([
      '--events',
      '24',
      '--rate',
      '12',
      '--json',
      '--report-only',
      ...(database ? ['--database-url', database.url] : []),
    ]);
    expect(result.stderr).not.toContain('    at ');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as BenchReport;
    expect(report).toMatchObject({
      store: TEST_STORE,
      events: 24,
      rate: 12,
      acknowledged: 24,
      dispatched: 24,
      completed: 24,
      lost: 0,
    });
    // Each run's completion webhook, timed by the sender; the service's log has every webhook it
    // answered (the provider's and the consumer's completion tracking: at least two per run).
    expect(report.webhookAck.count).toBe(24);
    expect(report.webhookResponse.count).toBeGreaterThanOrEqual(48);
    expect(report.dispatch.count).toBe(24);
    expect(report.completion.count).toBe(24);
    for (const summary of [report.webhookAck, report.webhookResponse, report.dispatch, report.completion]) {
      expect(summary.p50).toBeLessThanOrEqual(summary.p95);
      expect(summary.p95).toBeLessThanOrEqual(summary.p99);
      expect(summary.p99).toBeLessThanOrEqual(summary.max);
    }
    expect(report.achievedRate).toBeGreaterThan(0);
    expect(report.memory.peakRssBytes).toBeGreaterThan(20 * 1024 * 1024);
    expect(report.targets.map((t) => t.name)).toEqual([
      'webhook acknowledgement p99',
      'every acknowledged event delivered and completed',
    ]);
    expect(report.targets[1]?.met).toBe(true);
  });

  it('refuses a bad option with a clear message', async () => {
    const result = await runBench(['--events', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--events must be a whole number from 1 to 1000000 (got 0)');
  });
});
