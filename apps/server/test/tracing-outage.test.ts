import { afterEach, describe, expect, it } from 'vitest';
import { setUpWorld } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';
import { type OtlpReceiver, refusedOtlpUrl, startOtlpReceiver } from './support/otlp-receiver.js';

/**
 * A tracing backend that hangs (accepts and never answers) or refuses connections leaves delivery
 * as it is: every delivery is dispatched, confirmed and completed, and the spans that could not be
 * exported are counted in `zekt_trace_spans_dropped_total`.
 */
const RUNS = 6;
let h: Harness | undefined;
let receiver: OtlpReceiver | undefined;

afterEach(async () => {
  await h?.close();
  await receiver?.close();
  h = undefined;
  receiver = undefined;
});

function dropped(metrics: string, reason: string): number {
  const match = new RegExp(`^zekt_trace_spans_dropped_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(
    metrics,
  );
  return Number(match?.[1] ?? Number.NaN);
}

describe('an OTLP endpoint that is down', () => {
  for (const mode of ['hangs', 'refuses connections'] as const) {
    it(`${mode}: deliveries are unaffected, dropped spans are counted`, { timeout: 60_000 }, async () => {
      let endpoint: string;
      if (mode === 'hangs') {
        receiver = await startOtlpReceiver({ mode: 'hang' });
        endpoint = receiver.url;
      } else {
        endpoint = await refusedOtlpUrl();
      }
      h = await startHarness({
        transport: 'inject',
        env: {
          ZEKT_INSTALLATION_DISPATCH_RATE: '0',
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
          OTEL_EXPORTER_OTLP_TIMEOUT: '500',
          OTEL_BSP_SCHEDULE_DELAY: '20',
          OTEL_BSP_MAX_QUEUE_SIZE: '8',
          OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4',
        },
      });
      const world = await setUpWorld(h);
      for (const [method, path, body] of [
        ['PUT', '/api/v1/repositories/globex/app/completion-tracking', { enabled: true }],
        ['PATCH', `/api/v1/subscriptions/${world.subscriptionId}`, { durable: true }],
      ] as const) {
        expect((await h.call(method, path, { token: world.consumerToken, body })).status).toBe(200);
      }
      h.sim.defineConsumerWorkflow({
        repository: 'globex/app',
        workflow: 'on-deploy.yml',
        types: ['acme-deployed'],
        conclusion: 'success',
        zekt: { url: h.url, confirm: true, complete: true, auth: 'delivery-token' },
      });
      for (let i = 0; i < RUNS; i++) {
        const run = await h.sim.runWorkflow({
          repository: 'acme/api',
          workflow: 'deploy.yml',
          message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { n: i } },
        });
        expect(run.message?.status).toBe(201);
      }
      const harness = h;
      const records = await eventually(async () => {
        const list = await harness.call('GET', '/api/v1/deliveries', { token: world.providerToken });
        const all = list.body.deliveries as Array<{ deliveryStatus: string }>;
        return all.length === RUNS && all.every((d) => d.deliveryStatus === 'Completed') ? all : undefined;
      }, 30_000);
      expect(records).toHaveLength(RUNS);
      // Tracing was on all along: each dispatch carried its attempt's trace context.
      for (const dispatch of h.sim.dispatches({ repository: 'globex/app' })) {
        const zekt = (dispatch.clientPayload as { zekt: { traceparent?: string } }).zekt;
        expect(zekt.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      }
      // Nothing was exported; what could not be was counted, none of it waited for.
      const metrics = await eventually(async () => {
        const text = (await h!.zekt.metrics.scrape()).body;
        return dropped(text, 'export_failed') > 0 ? text : undefined;
      }, 20_000);
      expect(metrics).toMatch(/^zekt_trace_spans_exported_total 0$/m);
      if (mode === 'hangs') {
        // While an export hangs, the spans beyond the queue's 8 were dropped at once.
        expect(dropped(metrics, 'queue_full')).toBeGreaterThan(0);
        expect(receiver?.requests.length).toBeGreaterThan(0);
      }
    });
  }
});
