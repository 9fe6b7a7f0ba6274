import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchOptions } from '@zekt/server/dist/cli/bench-workspace.js';
import { DEMO, seedDemo } from '@zekt/server/dist/cli/demo-seed.js';
import { environmentForSimulator } from '@zekt/server/dist/cli/simulator-environment.js';
import { createZektClient } from '@zekt/server/dist/cli/zekt-client.js';
import { loadStoreConfig } from '@zekt/server/dist/config.js';
import { freePort } from '@zekt/server/dist/free-port.js';
import { openStore, type Store } from '@zekt/server/dist/store/store.js';
import { sql } from 'kysely';
import { createGitHubSimulator } from 'zekt-github-sim';
import { type BenchMeasurements, type BenchReport, judgeBench } from './bench-report.js';
import { summarizeLatencies } from './latency-summary.js';
import { type ServerProcess, startServerProcess } from './server-process.js';
import { ZEKT_CLI } from './zekt-cli.js';

/**
 * The schema `--schema` gives the demo service: what the bench's messages are, so every one
 * passes and the check's cost is measured, not a refusal's.
 */
export const BENCH_MESSAGE_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['version', 'blob'],
  properties: {
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
    blob: { type: 'string', maxLength: 600_000 },
  },
  additionalProperties: false,
};

const WARM_UP_RUNS = 10;

/**
 * `zekt bench`: the whole path under load. The service runs as its own process (`zekt serve`, all
 * roles, per-installation pacing off as allowed for benchmarks), so its latency and memory
 * are its own; this process plays GitHub (the simulator) and the load: the demo world of
 * `zekt dev` with durable delivery and a consumer workflow that confirms and completes. N provider
 * runs send their message and complete, `concurrency` at a time; the simulator times each
 * completion webhook the way GitHub would (request sent → answer), and the store's own timestamps
 * give dispatch and completion latency. A few warm-up runs are left out of the numbers.
 */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const progress = options.progress ?? (() => {});
  const dataDir = mkdtempSync(join(tmpdir(), 'zekt-bench-'));
  const sim = await createGitHubSimulator({ host: '127.0.0.1', port: 0, allowPrivateHookUrls: true });
  let server: ServerProcess | null = null;
  let store: Store | null = null;
  try {
    const port = await freePort();
    const env = {
      ...environmentForSimulator(sim, {
        port,
        dataDir,
        // Info is the production default, and the request log is where response times come from.
        logLevel: 'info',
        ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
      }),
      ZEKT_INSTALLATION_DISPATCH_RATE: '0',
    };
    server = await startServerProcess({
      cli: ZEKT_CLI,
      env,
      url: `http://127.0.0.1:${port}`,
      ...(options.profileDir ? { execArgv: ['--cpu-prof', '--cpu-prof-dir', options.profileDir] } : {}),
    });
    const zektUrl = server.url;
    sim.setAppWebhookUrl(`${zektUrl}/webhooks/github`);
    // The bench reads the service's store (WAL lets a second process read SQLite alongside).
    store = await openStore(loadStoreConfig(env));
    const demo = await seedDemo({ zektUrl, sim, store });
    const schema = options.schema ?? 'none';
    if (schema !== 'none') {
      await createZektClient({ baseUrl: zektUrl, token: demo.tokens.provider }).PUT(
        '/api/v1/services/{id}/schema',
        {
          params: { path: { id: demo.serviceId } },
          body: { schema: BENCH_MESSAGE_SCHEMA, enforcement: schema },
        },
      );
    }
    const db = store.db;

    const payload = { version: '1.2.3', blob: 'x'.repeat(Math.max(0, options.payloadBytes - 40)) };
    const runOnce = async () => {
      const result = await sim.runWorkflow({
        repository: DEMO.provider.repository,
        workflow: DEMO.provider.workflow,
        name: DEMO.provider.workflowName,
        message: { zektUrl, eventType: DEMO.service.eventType, payload },
      });
      if (result.message?.status !== 201)
        throw new Error(
          `the message step failed: ${result.message?.status} ${JSON.stringify(result.message)}`,
        );
      const completed = result.webhooks.find((w) => w.event === 'workflow_run' && w.action === 'completed');
      return completed && completed.status !== null && completed.status < 300 ? completed.durationMs : null;
    };
    const completedSince = async (since: number) => {
      const row = await db
        .selectFrom('deliveries')
        .innerJoin('events', 'events.event_id', 'deliveries.event_id')
        .select([
          sql<number>`count(*)`.as('total'),
          sql<number>`sum(case when deliveries.status = 'Completed' then 1 else 0 end)`.as('completed'),
          sql<number>`sum(case when deliveries.dispatch_state = 'accepted' then 1 else 0 end)`.as(
            'dispatched',
          ),
        ])
        .where('events.received_at', '>=', since)
        .executeTakeFirstOrThrow();
      return { completed: Number(row.completed ?? 0), dispatched: Number(row.dispatched ?? 0) };
    };
    const waitForCompleted = async (since: number, expected: number, deadline: number) => {
      for (;;) {
        const counts = await completedSince(since);
        if (counts.completed >= expected || Date.now() > deadline) return counts;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    progress(`warming up (${WARM_UP_RUNS} runs)…`);
    const warmUpFrom = Date.now();
    for (let i = 0; i < WARM_UP_RUNS; i++) await runOnce();
    await waitForCompleted(warmUpFrom, WARM_UP_RUNS, Date.now() + options.timeoutMs);

    progress(
      options.rate > 0
        ? `starting ${options.events} provider runs at ${options.rate}/s (at most ${options.concurrency} in flight)…`
        : `sending ${options.events} provider runs, ${options.concurrency} at a time…`,
    );
    server.takeResponseTimes('POST', '/webhooks/github');
    const measureFrom = Date.now();
    const acks: number[] = [];
    const load = await generateLoad({
      events: options.events,
      rate: options.rate,
      concurrency: options.concurrency,
      run: async () => {
        const ack = await runOnce();
        if (ack !== null) acks.push(ack);
      },
    });
    progress(`${acks.length} runs acknowledged; waiting for the consumer to complete every delivery…`);
    const counts = await waitForCompleted(measureFrom, acks.length, Date.now() + options.timeoutMs);
    const wallMs = Date.now() - measureFrom;
    const memory = server.memory();
    // Completion-tracking webhooks of the consumer arrive on the same route; the provider's are
    // the ones the simulator timed (one per run), so the service's own times cover both kinds.
    const serverAck = server.takeResponseTimes('POST', '/webhooks/github');

    const latencies = await db
      .selectFrom('deliveries')
      .innerJoin('events', 'events.event_id', 'deliveries.event_id')
      .leftJoin('delivery_attempts', (join) =>
        join
          .onRef('delivery_attempts.delivery_id', '=', 'deliveries.delivery_id')
          .on('delivery_attempts.outcome', '=', 'accepted'),
      )
      .select([
        'events.received_at as receivedAt',
        'deliveries.completed_at as completedAt',
        'delivery_attempts.started_at as attemptStartedAt',
        'delivery_attempts.duration_ms as attemptDurationMs',
      ])
      .where('events.received_at', '>=', measureFrom)
      .execute();
    const dispatch = latencies
      .filter((l) => l.attemptStartedAt !== null && l.attemptDurationMs !== null)
      .map((l) => Number(l.attemptStartedAt) + Number(l.attemptDurationMs) - Number(l.receivedAt));
    const completion = latencies
      .filter((l) => l.completedAt !== null)
      .map((l) => Number(l.completedAt) - Number(l.receivedAt));

    const measured: BenchMeasurements = {
      store: options.databaseUrl ? 'postgres' : 'sqlite',
      events: options.events,
      concurrency: options.concurrency,
      rate: options.rate,
      achievedRate: load.achievedRate,
      payloadBytes: options.payloadBytes,
      schema,
      wallMs,
      acknowledged: acks.length,
      dispatched: counts.dispatched,
      completed: counts.completed,
      webhookAck: summarizeLatencies(acks),
      webhookResponse: summarizeLatencies(serverAck.map((t) => Math.round(t * 10) / 10)),
      dispatch: summarizeLatencies(dispatch),
      completion: summarizeLatencies(completion),
      memory,
    };
    return judgeBench(measured);
  } finally {
    await store?.close();
    await server?.stop();
    await sim.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Starts `events` runs. With a rate, on a fixed schedule whatever the service's answers (an open
 * loop, as GitHub sends webhooks: a slow service does not slow the senders down, so its latency
 * is measured at the load asked for — a closed loop at saturation would only measure its own
 * queue); `concurrency` caps the runs in flight, and the achieved rate tells when it held the
 * schedule back. Without a rate, `concurrency` runs back to back (maximum throughput).
 */
async function generateLoad(input: {
  events: number;
  rate: number;
  concurrency: number;
  run: () => Promise<void>;
}): Promise<{ achievedRate: number }> {
  const started = Date.now();
  const inFlight = new Set<Promise<void>>();
  const failures: unknown[] = [];
  for (let i = 0; i < input.events; i++) {
    if (input.rate > 0) {
      const due = started + (i * 1000) / input.rate;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    }
    while (inFlight.size >= input.concurrency) await Promise.race(inFlight);
    const task: Promise<void> = input
      .run()
      .catch((error: unknown) => {
        failures.push(error);
      })
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
  }
  const lastStarted = Date.now();
  await Promise.all(inFlight);
  if (failures.length > 0) throw failures[0];
  const seconds = Math.max(lastStarted - started, 1) / 1000;
  return { achievedRate: Math.round(((input.events - 1) / seconds) * 10) / 10 };
}
