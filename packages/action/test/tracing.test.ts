import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConsumerRunRecord } from 'zekt-github-sim';
import { makeDurable, setUpWorld, type World } from '../../../apps/server/test/support/demo-world.js';
import { eventually, type Harness, startHarness } from '../../../apps/server/test/support/harness.js';
import {
  type OtlpReceiver,
  refusedOtlpUrl,
  startOtlpReceiver,
} from '../../../apps/server/test/support/otlp-receiver.js';
import { runActionStep } from './support/run-action.js';

/**
 * Consumer tracing: Zekt traces the provider run and sends each delivery with the context of the
 * dispatch that made it (`client_payload.zekt.traceparent`); a consumer workflow that sets
 * OTEL_EXPORTER_OTLP_ENDPOINT gets a span per consumer step in the same trace, under that
 * dispatch. A tracing backend that is down never changes what the step does.
 */
let h: Harness;
let world: World;
let otlp: OtlpReceiver;

beforeEach(async () => {
  otlp = await startOtlpReceiver();
  h = await startHarness({
    transport: 'inject',
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '20',
      ZEKT_INSTALLATION_DISPATCH_RATE: '0',
    },
  });
  world = await setUpWorld(h);
  await makeDurable(h, world);
  h.sim.defineConsumerWorkflow({
    repository: 'globex/app',
    workflow: 'on-deploy.yml',
    types: ['acme-deployed'],
  });
});

afterEach(async () => {
  await h.close();
  await otlp.close();
});

async function deliver(): Promise<ConsumerRunRecord> {
  await h.sim.runWorkflow({
    repository: 'acme/api',
    workflow: 'deploy.yml',
    message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { version: '1.2.3' } },
  });
  return eventually(() => h.sim.consumerRuns({ repository: 'globex/app' })[0]);
}

function traceparentOf(record: ConsumerRunRecord): string {
  return (record.event as { client_payload: { zekt: { traceparent: string } } }).client_payload.zekt
    .traceparent;
}

describe('consumer steps in the provider run’s trace', () => {
  it('confirm and complete record their spans under the dispatch that started the run', async () => {
    const record = await deliver();
    const sent = traceparentOf(record);
    expect(sent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, dispatchSpanId] = sent.split('-') as [string, string, string];
    const traced = {
      ...record.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team-key=consumer-key-1',
      OTEL_SERVICE_NAME: 'globex-deploys',
    };
    const confirmed = await runActionStep({
      action: 'confirm',
      inputs: { 'zekt-api-url': h.url },
      env: traced,
      event: record.event,
    });
    expect(confirmed.errors).toEqual([]);
    expect(confirmed.warnings).toEqual([]);
    expect(confirmed.outputs.status).toBe('Confirmed');
    expect(confirmed.outputs.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    const completed = await runActionStep({
      action: 'complete',
      inputs: { 'zekt-api-url': h.url },
      env: traced,
      event: record.event,
    });
    expect(completed.outputs.status).toBe('Completed');

    const steps = await eventually(() => {
      const found = otlp.spans.filter((s) => s.name.startsWith('zekt.action.'));
      const dispatch = otlp.spans.find((s) => s.name === 'zekt.dispatch');
      return found.length === 2 && dispatch ? { found, dispatch } : undefined;
    });
    // Zekt's own dispatch span is the one whose context the consumer received.
    expect(steps.dispatch).toMatchObject({ traceId, spanId: dispatchSpanId });
    const [confirmSpan, completeSpan] = ['zekt.action.confirm', 'zekt.action.complete'].map(
      (name) => steps.found.find((s) => s.name === name)!,
    );
    for (const span of [confirmSpan!, completeSpan!]) {
      expect(span).toMatchObject({
        traceId,
        parentSpanId: dispatchSpanId,
        kind: 3,
        status: { code: 1 },
        resource: { 'service.name': 'globex-deploys' },
        attributes: {
          'zekt.delivery.id': record.deliveryId,
          'zekt.consumer.repository': 'globex/app',
          'zekt.outcome': 'ok',
        },
      });
      expect(span.endMs).toBeGreaterThanOrEqual(span.startMs);
    }
    expect(confirmSpan!.spanId).toBe(confirmed.outputs.traceparent!.split('-')[2]);
    const fromAction = otlp.requests.filter((r) => r.body.includes('zekt.action.'));
    expect(fromAction.map((r) => r.headers['x-team-key'])).toEqual(['consumer-key-1', 'consumer-key-1']);
    // The span names the delivery, never its token.
    const token = (record.event as { client_payload: { zekt: { token: string } } }).client_payload.zekt.token;
    for (const request of fromAction) expect(request.body).not.toContain(token);
  });

  it('a failed step still records its span, marked failed', async () => {
    const record = await deliver();
    const failed = await runActionStep({
      action: 'complete',
      inputs: { 'zekt-api-url': await refusedOtlpUrl(), 'retry-base-delay-ms': '0', auth: 'delivery-token' },
      env: { ...record.env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url },
      event: record.event,
    });
    expect(failed.exitCode).not.toBe(0);
    const span = await eventually(() => otlp.spans.find((s) => s.name === 'zekt.action.complete'));
    expect(span).toMatchObject({ status: { code: 2 }, attributes: { 'zekt.outcome': 'failed' } });
    expect(span.resource['service.name']).toBe('zekt-action');
  });

  it('without an OTLP endpoint the step exports nothing and hands the dispatch’s context on', async () => {
    const record = await deliver();
    const before = otlp.requests.length;
    const confirmed = await runActionStep({
      action: 'confirm',
      inputs: { 'zekt-api-url': h.url },
      env: record.env,
      event: record.event,
    });
    expect(confirmed.outputs).toEqual({
      'delivery-id': record.deliveryId,
      status: 'Confirmed',
      traceparent: traceparentOf(record),
    });
    // Whatever Zekt exports meanwhile, no request comes from the action.
    await new Promise((done) => setTimeout(done, 200));
    expect(otlp.requests.slice(before).filter((r) => r.body.includes('zekt.action.'))).toEqual([]);
  });

  for (const backend of ['refuses connections', 'hangs'] as const) {
    it(`a tracing backend that ${backend} leaves the step as it is, with a warning`, async () => {
      const record = await deliver();
      const hanging = backend === 'hangs' ? await startOtlpReceiver({ mode: 'hang' }) : null;
      try {
        const endpoint = hanging?.url ?? (await refusedOtlpUrl());
        const confirmed = await runActionStep({
          action: 'confirm',
          inputs: { 'zekt-api-url': h.url },
          env: {
            ...record.env,
            OTEL_EXPORTER_OTLP_ENDPOINT: `http://user:pw-93@${endpoint.slice('http://'.length)}`,
            OTEL_EXPORTER_OTLP_TIMEOUT: '300',
          },
          event: record.event,
        });
        expect(confirmed.exitCode).toBe(0);
        expect(confirmed.errors).toEqual([]);
        expect(confirmed.outputs.status).toBe('Confirmed');
        expect(confirmed.warnings).toHaveLength(1);
        expect(confirmed.warnings[0]).toMatch(
          /^the step's trace span could not be exported to http:\/\/127\.0\.0\.1:\d+\/v1\/traces \(OTEL_EXPORTER_OTLP_ENDPOINT\): /,
        );
        expect(confirmed.stdout).not.toContain('pw-93');
        if (hanging) expect(hanging.requests.length).toBe(1);
      } finally {
        await hanging?.close();
      }
    });
  }
});
