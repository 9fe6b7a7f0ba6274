import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSpanId, runTraceId } from '../../src/domain/trace-context.js';
import { SPAN_ATTRIBUTE_NAMES } from '../../src/tracing/tracer.js';
import { eventually } from '../support/harness.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.js';
import { type ProcessStack, prepareProcessStack } from '../support/process-stack.js';
import { type JsonBody, json, ProcessGroup } from '../support/processes.js';
import { type RemoteWorld, setUpRemoteWorld } from '../support/remote-world.js';

/**
 * One trace per provider run, as deployed: an API process and a worker process on one PostgreSQL,
 * exporting to a real OTLP/HTTP receiver. One provider run sends a message and completes; it is
 * delivered to two consumers (globex/app and initech/web), GitHub refuses initech's first dispatch
 * once (a retry), each consumer workflow confirms and completes, and bob replays globex's
 * delivery. Every span lands in the one trace derived from the run key, under the right parent,
 * across both processes; no attribute carries a payload, a token or a secret.
 */
const processes = new ProcessGroup();
let stack: ProcessStack;
let otlp: OtlpReceiver;
let world: RemoteWorld;
let carol: string;
let workerUrl: string;

// biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
const RUN_NAME = 'zekt ${{ github.event.client_payload.zekt.deliveryId }}';
const PAYLOAD_MARKER = 'payload-marker-5f1c0b7e';

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  stack = await prepareProcessStack(processes, {
    name: 'tracing',
    env: {
      ZEKT_RETRY_SCHEDULE: '0ms,300ms,600ms,1s',
      ZEKT_POLL_INTERVAL_MS: '200',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-otlp-key=otlp-header-secret-93b1',
      OTEL_SERVICE_NAME: 'zekt-trace-test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    },
  });
  const { sim, zektUrl, zektEnv } = stack;
  await processes.startZekt(zektUrl, zektEnv, ['--role', 'api']);
  workerUrl = (await processes.startProbedWorker({ ...zektEnv, ZEKT_WORKER_ID: 'worker-traced' })).url;
  world = await setUpRemoteWorld({ processes, sim, zektUrl, zektEnv, workflow: 'deploy.yml', durable: true });

  // A second consumer, durable too.
  const installed = await json('POST', `${sim.url}/_sim/installations`, {
    account: { login: 'initech', type: 'Organization' },
    repositories: ['web'],
    sender: { login: 'carol' },
  });
  expect(installed.status).toBe(201);
  carol = (await processes.run(['token', 'create', '--login', 'carol'], zektEnv)).trim().split('\n').pop()!;
  const subscription = await json(
    'POST',
    `${zektUrl}/api/v1/subscriptions`,
    { serviceId: world.serviceId, deliversTo: 'initech/web' },
    carol,
  );
  expect(subscription.status).toBe(201);
  for (const [method, path, token, body] of [
    ['POST', `/api/v1/subscriptions/${subscription.body.id}/approve`, world.alice, undefined],
    ['PUT', '/api/v1/repositories/initech/web/completion-tracking', carol, { enabled: true }],
    ['PATCH', `/api/v1/subscriptions/${subscription.body.id}`, carol, { durable: true }],
  ] as const) {
    const answer = await json(method, zektUrl + path, body, token);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
  }
  for (const [repository, auth] of [
    ['globex/app', 'oidc'],
    ['initech/web', 'delivery-token'],
  ] as const) {
    const workflow = await json('POST', `${sim.url}/_sim/consumer-workflows`, {
      repository,
      workflow: 'on-deploy.yml',
      types: ['deployed'],
      runName: RUN_NAME,
      conclusion: 'success',
      zekt: { url: zektUrl, confirm: true, complete: true, auth },
    });
    expect(workflow.status).toBeLessThan(300);
  }
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await otlp?.close();
});

async function delivery(id: string): Promise<JsonBody> {
  return (await json('GET', `${stack.zektUrl}/api/v1/deliveries/${id}`, undefined, world.alice)).body;
}

async function completed(id: string): Promise<JsonBody> {
  return eventually(async () => {
    const record = await delivery(id);
    return record.deliveryStatus === 'Completed' ? record : undefined;
  }, 30_000);
}

describe('one trace per provider run', () => {
  it('puts the message, the webhook, routing, both deliveries, their attempts, reports and a replay into one trace', {
    timeout: 120_000,
  }, async () => {
    const { sim, zektUrl } = stack;
    // GitHub refuses initech's first dispatch once: one retry.
    await json('POST', `${sim.url}/_sim/faults`, {
      method: 'POST',
      path: '/repos/initech/web/dispatches',
      faults: [{ kind: 'status', status: 502 }],
    });
    const started = await json('POST', `${sim.url}/_sim/repos/acme/api/runs`, {
      workflow: 'deploy.yml',
      message: { zektUrl, eventType: 'deployed', payload: { marker: PAYLOAD_MARKER } },
    });
    expect(started.body.message.status).toBe(201);
    const runId = String(started.body.run.id);
    const runKey = { repositoryId: world.providerRepository.id as number, runId, runAttempt: 1 };

    const list = await eventually(async () => {
      const answer = await json('GET', `${zektUrl}/api/v1/deliveries`, undefined, world.alice);
      const mine = (answer.body.deliveries as JsonBody[]).filter((d) => d.correlationId === runId);
      return mine.length === 2 ? mine : undefined;
    }, 30_000);
    const globex = await completed(list.find((d) => d.consumer.repository === 'globex/app')!.deliveryId);
    const initech = await completed(list.find((d) => d.consumer.repository === 'initech/web')!.deliveryId);
    expect(initech.retryNumber).toBe(1);
    const replay = await json('POST', `${zektUrl}/api/replay/${globex.deliveryId}`, undefined, world.bob);
    expect(replay.status).toBe(202);
    const replayed = await completed(replay.body.deliveryId);
    const deliveryIds = [globex.deliveryId, initech.deliveryId, replayed.deliveryId] as string[];

    // Every span of the run has arrived: each delivery's attempts, confirm and complete included.
    const spans = await eventually(() => {
      const of = (name: string, deliveryId?: string) =>
        otlp.spans.filter(
          (s) =>
            s.name === name && (deliveryId === undefined || s.attributes['zekt.delivery.id'] === deliveryId),
        );
      const complete =
        ['zekt.run', 'zekt.message', 'zekt.webhook', 'zekt.route', 'zekt.replay'].every(
          (n) => of(n).length > 0,
        ) &&
        of('zekt.delivery').length === 3 &&
        of('zekt.dispatch').length === 4 &&
        deliveryIds.every((id) => of('zekt.confirm', id).length > 0 && of('zekt.complete', id).length > 0);
      return complete ? [...otlp.spans] : undefined;
    }, 30_000);

    // One trace, the run key's, with one root: the run's span, ids derived from the run key.
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([runTraceId(runKey)]));
    const roots = spans.filter((s) => s.parentSpanId === null);
    expect(roots.map((s) => s.name)).toEqual(['zekt.run']);
    expect(roots[0]!.spanId).toBe(runSpanId(runKey));
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    expect(byId.size).toBe(spans.length);
    const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId ?? '');
    for (const span of spans) if (span.parentSpanId !== null) expect(parentOf(span), span.name).toBeDefined();
    const one = (name: string) => {
      const found = spans.filter((s) => s.name === name);
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };

    // Ingestion on the API process, under the run's root.
    const message = one('zekt.message');
    const webhook = one('zekt.webhook');
    expect(parentOf(message)?.name).toBe('zekt.run');
    expect(parentOf(webhook)?.name).toBe('zekt.run');
    expect(message.resource['zekt.role']).toBe('api');
    expect(webhook.resource['zekt.role']).toBe('api');
    expect(message.attributes).toMatchObject({ 'zekt.outcome': 'stored', 'zekt.event_type': 'deployed' });
    // Routing on the worker continues the webhook's span, stored with the event.
    const route = one('zekt.route');
    expect(parentOf(route)).toBe(webhook);
    expect(route.resource['zekt.role']).toBe('worker');
    expect(route.resource['service.instance.id']).toBe('worker-traced');
    expect(route.attributes).toMatchObject({ 'zekt.outcome': 'routed', 'zekt.deliveries': 2 });

    const deliverySpan = (id: string) => {
      const found = spans.filter(
        (s) => s.name === 'zekt.delivery' && s.attributes['zekt.delivery.id'] === id,
      );
      expect(found, id).toHaveLength(1);
      return found[0]!;
    };
    const children = (parent: ReceivedSpan, name: string) =>
      spans.filter((s) => s.name === name && s.parentSpanId === parent.spanId);
    for (const id of [globex.deliveryId, initech.deliveryId]) expect(parentOf(deliverySpan(id))).toBe(route);

    // Attempts: one for globex, two for initech (GitHub's 502, then the retry it accepted).
    expect(children(deliverySpan(globex.deliveryId), 'zekt.dispatch').map((s) => s.attributes)).toEqual([
      expect.objectContaining({
        'zekt.attempt.number': 1,
        'zekt.retry_number': 0,
        'zekt.outcome': 'accepted',
        'http.response.status_code': 204,
      }),
    ]);
    const initechAttempts = children(deliverySpan(initech.deliveryId), 'zekt.dispatch').sort(
      (a, b) => Number(a.attributes['zekt.attempt.number']) - Number(b.attributes['zekt.attempt.number']),
    );
    expect(initechAttempts.map((s) => s.attributes)).toEqual([
      expect.objectContaining({
        'zekt.attempt.number': 1,
        'zekt.retry_number': 0,
        'zekt.outcome': 'failed',
        'zekt.error.category': 'service_unavailable',
        'http.response.status_code': 502,
      }),
      expect.objectContaining({
        'zekt.attempt.number': 2,
        'zekt.retry_number': 1,
        'zekt.outcome': 'accepted',
        'http.response.status_code': 204,
      }),
    ]);
    expect(initechAttempts[0]!.status).toMatchObject({ code: 2, message: 'service_unavailable' });
    for (const attempt of initechAttempts) expect(attempt.resource['zekt.role']).toBe('worker');

    // The replay: under the original delivery's span, the replayed delivery under the replay.
    const replaySpan = one('zekt.replay');
    expect(parentOf(replaySpan)).toBe(deliverySpan(globex.deliveryId));
    expect(replaySpan.resource['zekt.role']).toBe('api');
    expect(parentOf(deliverySpan(replayed.deliveryId))).toBe(replaySpan);
    expect(deliverySpan(replayed.deliveryId).attributes['zekt.replay_of']).toBe(globex.deliveryId);
    expect(children(deliverySpan(replayed.deliveryId), 'zekt.dispatch')).toHaveLength(1);

    // Each delivery's confirm and complete (the consumer's calls, completion tracking) are its children.
    for (const id of deliveryIds) {
      for (const name of ['zekt.confirm', 'zekt.complete']) {
        const reports = spans.filter((s) => s.name === name && s.attributes['zekt.delivery.id'] === id);
        expect(reports.length, `${name} ${id}`).toBeGreaterThan(0);
        for (const report of reports) expect(parentOf(report)).toBe(deliverySpan(id));
      }
    }

    // The consumer got the context of the attempt GitHub accepted, to continue the trace.
    for (const [repository, ids] of [
      ['globex/app', [globex.deliveryId, replayed.deliveryId]],
      ['initech/web', [initech.deliveryId]],
    ] as const) {
      const dispatches = (await json('GET', `${sim.url}/_sim/dispatches?repository=${repository}`))
        .body as JsonBody[];
      for (const id of ids) {
        const sent = dispatches.find((d) => d.clientPayload.zekt.deliveryId === id)!;
        const accepted = children(deliverySpan(id), 'zekt.dispatch').find(
          (s) => s.attributes['zekt.outcome'] === 'accepted',
        )!;
        expect(sent.clientPayload.zekt.traceparent).toBe(`00-${runTraceId(runKey)}-${accepted.spanId}-01`);
      }
    }

    // No attribute (span or resource) names anything but ids, names, numbers and outcomes.
    const dispatched = [
      ...((await json('GET', `${sim.url}/_sim/dispatches?repository=globex/app`)).body as JsonBody[]),
      ...((await json('GET', `${sim.url}/_sim/dispatches?repository=initech/web`)).body as JsonBody[]),
    ];
    const secrets = [
      stack.zektEnv.ZEKT_SECRET!,
      stack.zektEnv.GITHUB_WEBHOOK_SECRET!,
      stack.zektEnv.GITHUB_CLIENT_SECRET,
      'otlp-header-secret-93b1',
      world.alice,
      world.bob,
      carol,
      PAYLOAD_MARKER,
      ...dispatched.map((d) => d.clientPayload.zekt.token as string),
    ].filter((secret): secret is string => typeof secret === 'string' && secret.length > 0);
    expect(secrets.length).toBeGreaterThanOrEqual(10);
    const allowed = new Set<string>(SPAN_ATTRIBUTE_NAMES);
    for (const span of spans) {
      for (const [key, value] of Object.entries(span.attributes)) {
        expect(allowed.has(key), `${span.name} attribute ${key}`).toBe(true);
        const text = String(value);
        for (const secret of secrets) expect(text, `${span.name} ${key}`).not.toContain(secret);
        // No token of any kind (JWT, GitHub, delivery, API), no URL with credentials.
        expect(text, `${span.name} ${key}`).not.toMatch(
          /eyJ[A-Za-z0-9_-]{10}|gh[opsu]_|zdt_|zkt_|zks_|:\/\/[^/]*@/,
        );
      }
      for (const [key, value] of Object.entries(span.resource)) {
        for (const secret of secrets) expect(String(value), `resource ${key}`).not.toContain(secret);
      }
      expect(JSON.stringify(span.status)).not.toContain(PAYLOAD_MARKER);
    }

    // The exporter sent the configured headers; nothing was dropped on the worker.
    expect(otlp.requests.every((r) => r.headers['x-otlp-key'] === 'otlp-header-secret-93b1')).toBe(true);
    const metrics = await (await fetch(`${workerUrl}/metrics`)).text();
    expect(metrics).toMatch(/^zekt_trace_spans_exported_total [1-9]/m);
    expect(metrics).toMatch(/^zekt_trace_spans_dropped_total\{reason="queue_full"\} 0$/m);
    expect(metrics).toMatch(/^zekt_trace_spans_dropped_total\{reason="export_failed"\} 0$/m);
  });
});
