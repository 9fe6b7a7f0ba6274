#!/usr/bin/env node
// What tracing costs Zekt per provider run, off and on (docs/performance.md, *Tracing*).
// Makes the span calls one run with one durable delivery makes at Zekt's seams — message,
// webhook, route, delivery, the run's root, the attempt (and the traceparent sent to the
// consumer), confirm, complete: 8 spans — for N runs whose inputs are built beforehand, with
// tracing off (`noTracer`) and on (the OpenTelemetry SDK exporting OTLP/HTTP JSON, default queue
// and batch settings, to a receiver in another process that answers 200). Reports this process's
// CPU time per run, exports included.
//
//   npm run build -w @zekt/server && node scripts/trace-cost.mjs [runs]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createOtelTracer } from '../apps/server/dist/tracing/otel-tracer.js';
import * as spans from '../apps/server/dist/tracing/spans.js';
import { noTracer } from '../apps/server/dist/tracing/tracer.js';

const RUNS = Number(process.argv[2] ?? 20_000);

// The receiver runs in a process of its own: its CPU is the tracing backend's, not Zekt's.
const receiver = spawn(
  process.execPath,
  [
    '-e',
    `require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => r.writeHead(200, { 'content-type': 'application/json' }).end('{}')); })
      .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const [port] = await once(createInterface({ input: receiver.stdout }), 'line');
const url = `http://127.0.0.1:${port}/v1/traces`;

/** What the seams have at hand for run i (rows, the parsed webhook), built before the clock starts. */
function inputsOf(i) {
  const runId = 30433642 + i;
  const run = {
    repositoryId: 1296269,
    runId,
    runAttempt: 1,
    displayTitle: null,
    event: 'push',
    summary: {
      repository: 'acme/api',
      workflow: 'Deploy',
      workflowPath: '.github/workflows/deploy.yml',
      runId: String(runId),
      runAttempt: 1,
      runNumber: 42,
      conclusion: 'success',
      headBranch: 'main',
      headSha: 'abc',
      actor: 'alice',
      htmlUrl: '',
      completedAt: '2026-11-26T12:00:00Z',
    },
  };
  const row = {
    delivery_id: `delivery-${i}`,
    event_id: `evt_${i}`,
    subscription_id: 'sub_1',
    consumer_account_id: 8,
    consumer_repository_id: 9,
    correlation_id: String(runId),
    event_type: 'deployed',
    durable: true,
    replay_of: null,
    attempt_count: 1,
    retry_number: 0,
    slot_reserved: false,
    status: 'Completed',
    trace_parent: null,
  };
  return {
    run,
    message: {
      run: {
        repositoryId: 1296269,
        runId,
        runAttempt: 1,
        repository: 'acme/api',
        workflowPath: '.github/workflows/deploy.yml',
      },
      eventType: 'deployed',
      startMs: Date.now(),
      outcome: 'stored',
      messageId: `msg_${i}`,
      bytes: 100,
    },
    event: {
      event_id: `evt_${i}`,
      repository_id: 1296269,
      run_id: runId,
      run_attempt: 1,
      account_id: 7,
      workflow_path: '.github/workflows/deploy.yml',
      trace_parent: null,
    },
    payload: { workflow_run: { run_started_at: '2026-11-26T11:59:00Z', updated_at: '2026-11-26T12:00:00Z' } },
    row,
    attempt: {
      number: 1,
      startedAt: Date.now(),
      durationMs: 3,
      outcome: 'accepted',
      statusCode: 204,
      errorCategory: null,
      errorMessage: null,
      responseHeaders: null,
    },
    report: { outcome: 'changed', delivery: row },
  };
}

/** The seams' calls for one run, in the order Zekt makes them. */
function oneRun(tracer, input) {
  spans.recordMessageSpan(tracer, input.message);
  const webhook = spans.startWebhookSpan(tracer, input.run, 'guid');
  input.event.trace_parent = webhook.traceparent;
  const route = spans.startRouteSpan(tracer, input.event);
  input.row.trace_parent = spans.recordDeliverySpan(tracer, route, input.row);
  route.end({ attributes: { 'zekt.outcome': 'routed', 'zekt.deliveries': 1 } });
  webhook.end({ attributes: { 'zekt.outcome': 'accepted' } });
  spans.recordRunSpan(tracer, input.run, input.payload);
  spans.attemptTraceparent(tracer, input.row);
  spans.recordAttemptSpan(tracer, input.row, input.attempt, { retry_number: 0 });
  spans.recordReportSpan(tracer, 'confirm', input.attempt.startedAt, input.report);
  spans.recordReportSpan(tracer, 'complete', input.attempt.startedAt, input.report);
}

const counts = { exported: 0, dropped: 0 };
function otelTracer() {
  return createOtelTracer({
    settings: {
      url,
      headers: {},
      compression: 'none',
      timeoutMs: 10_000,
      serviceName: 'bench',
      resourceAttributes: {},
      sampler: { kind: 'parentbased_always_on', ratio: 1 },
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
      scheduleDelayMs: 5_000,
      exportTimeoutMs: 30_000,
    },
    resource: { role: 'all', instanceId: 'bench' },
    onExported: (n) => {
      counts.exported += n;
    },
    onDropped: (_reason, n) => {
      counts.dropped += n;
    },
  });
}

async function measure(name, tracer) {
  const inputs = Array.from({ length: RUNS }, (_, i) => inputsOf(i));
  await runAll(
    tracer,
    Array.from({ length: 2_000 }, (_, i) => inputsOf(RUNS + i)),
  ); // warm-up
  const { exported, dropped } = counts;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await runAll(tracer, inputs);
  await tracer.shutdown(60_000);
  const used = process.cpuUsage(cpu);
  const perSecond = Math.round(RUNS / ((performance.now() - started) / 1000));
  console.log(
    `${name.padEnd(38)} ${((used.user + used.system) / RUNS).toFixed(2).padStart(8)} µs CPU per run (${perSecond} runs/s; spans exported ${counts.exported - exported}, dropped ${counts.dropped - dropped})`,
  );
}

async function runAll(tracer, inputs) {
  for (let i = 0; i < inputs.length; i++) {
    oneRun(tracer, inputs[i]);
    // Let the exporter work between runs, as it does between requests under load.
    if (i % 50 === 49) await new Promise((done) => setImmediate(done));
  }
}

await measure('tracing off (noTracer)', noTracer);
await measure('tracing on (8 spans per run, exported)', otelTracer());
receiver.kill();
