import type { BenchSchemaMode } from '@zekt/server/dist/cli/bench-workspace.js';
import type { LatencySummary } from './latency-summary.js';

export type { BenchSchemaMode };

/**
 * What a `zekt bench` run measured, and whether it met the targets. Pure: the run collects the
 * numbers, this module judges and prints them.
 */
export interface BenchMeasurements {
  store: 'sqlite' | 'postgres';
  events: number;
  concurrency: number;
  /** Provider runs started per second, asked (0: closed loop) and achieved. */
  rate: number;
  achievedRate: number;
  payloadBytes: number;
  /** The demo service's message schema: none, or one every message matches, in this enforcement. */
  schema: BenchSchemaMode;
  /** Wall time from the first measured run to the last delivery Completed. */
  wallMs: number;
  /** Runs whose completion webhook Zekt acknowledged with 2xx. */
  acknowledged: number;
  /** Deliveries GitHub accepted, and deliveries the consumer reported Completed. */
  dispatched: number;
  completed: number;
  /** Provider run completed → `POST /webhooks/github` answered, as the sender saw it. */
  webhookAck: LatencySummary;
  /** `POST /webhooks/github` read → answer written, as the service measured it (every webhook). */
  webhookResponse: LatencySummary;
  /** Completion webhook received → GitHub accepted the `repository_dispatch`. */
  dispatch: LatencySummary;
  /** Completion webhook received → the consumer's complete call recorded. */
  completion: LatencySummary;
  /** Of the service process (Linux; null where the kernel does not say). */
  memory: { peakRssBytes: number | null; rssBytes: number | null };
}

export interface BenchTarget {
  name: string;
  limit: string;
  actual: string;
  met: boolean;
}

export interface BenchReport extends BenchMeasurements {
  throughputPerSecond: number;
  /** Events acknowledged but not delivered: always a failure, whatever the targets say. */
  lost: number;
  targets: BenchTarget[];
}

/** The webhook is answered well inside GitHub's 10 s, target p99 < 50 ms. */
export const WEBHOOK_ACK_P99_TARGET_MS = 50;

export function judgeBench(measured: BenchMeasurements): BenchReport {
  const seconds = measured.wallMs / 1000;
  return {
    ...measured,
    throughputPerSecond: seconds > 0 ? Math.round((measured.completed / seconds) * 10) / 10 : 0,
    lost: measured.acknowledged - measured.completed,
    targets: [
      {
        name: 'webhook acknowledgement p99',
        limit: `< ${WEBHOOK_ACK_P99_TARGET_MS} ms`,
        actual: `${measured.webhookAck.p99} ms`,
        met: measured.webhookAck.p99 < WEBHOOK_ACK_P99_TARGET_MS,
      },
      {
        name: 'every acknowledged event delivered and completed',
        limit: `${measured.acknowledged}`,
        actual: `${measured.completed}`,
        met: measured.completed === measured.acknowledged && measured.acknowledged === measured.events,
      },
    ],
  };
}

export function formatBenchReport(report: BenchReport): string {
  const mb = (bytes: number | null) => (bytes === null ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(1)} MB`);
  const row = (label: string, s: LatencySummary) =>
    `  ${label.padEnd(30)} p50 ${ms(s.p50)}  p95 ${ms(s.p95)}  p99 ${ms(s.p99)}  max ${ms(s.max)}  (n=${s.count})`;
  return [
    `zekt bench: ${report.events} provider runs ${
      report.rate > 0
        ? `at ${report.rate}/s (achieved ${report.achievedRate}/s)`
        : `back to back, ${report.concurrency} at a time (${report.achievedRate}/s)`
    }, ${report.payloadBytes}-byte messages${report.schema === 'none' ? '' : ` checked against a schema (${report.schema})`}, ${report.store} store, durable delivery`,
    '',
    'latency',
    row('webhook answered (service)', report.webhookResponse),
    row('webhook answered (sender)', report.webhookAck),
    row('webhook → dispatch accepted', report.dispatch),
    row('webhook → consumer completed', report.completion),
    '',
    `throughput    ${report.throughputPerSecond} events/s completed end to end (${(report.wallMs / 1000).toFixed(1)} s)`,
    `delivered     ${report.dispatched} dispatched, ${report.completed} completed, ${report.lost} lost of ${report.acknowledged} acknowledged`,
    `memory        zekt serve: peak RSS ${mb(report.memory.peakRssBytes)}, RSS at the end ${mb(report.memory.rssBytes)}`,
    '',
    'targets',
    ...report.targets.map(
      (t) => `  ${t.met ? 'met   ' : 'MISSED'}  ${t.name}: ${t.actual} (target ${t.limit})`,
    ),
    '',
  ].join('\n');
}

function ms(value: number): string {
  return `${value} ms`.padStart(7);
}
