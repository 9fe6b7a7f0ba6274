import { randomBytes } from 'node:crypto';
import { HttpClient } from '@actions/http-client';
import { loadDelivery } from './dispatch-event.js';

/**
 * A consumer step's span in the provider run's trace (OpenTelemetry). Zekt sends each delivery
 * with `client_payload.zekt.traceparent`, the W3C context of the dispatch that started this run;
 * when the consumer workflow sets an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` in its `env:`),
 * the step records one span under it — `zekt.action.confirm`, `.complete` or `.fetch-payload` —
 * and exports it over OTLP/HTTP as JSON when the step ends.
 *
 * Written by hand rather than with the OpenTelemetry SDK: one span, one POST, and the bundle stays
 * the size it was (the SDK and its exporter would add several hundred KB to dist/index.js). A
 * tracing backend that is down or slow never fails the step: the export is bounded by its timeout
 * and a failure becomes a warning.
 * https://www.w3.org/TR/trace-context/ · https://opentelemetry.io/docs/specs/otlp/#otlphttp
 */
export interface StepTraceSettings {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  serviceName: string;
  resourceAttributes: Record<string, string>;
}

export interface StepSpan {
  /** The step span's own `traceparent` (the `traceparent` output: later steps continue under it). */
  traceparent: string;
  /**
   * Ends the span and exports it (when an endpoint is set and the trace is sampled); resolves with
   * what went wrong with the export (null: exported, or nothing to export), never rejects.
   */
  end(outcome: { ok: boolean }): Promise<string | null>;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The OTLP settings of the step's environment, as OpenTelemetry SDKs read them; null when no
 * endpoint is set or tracing is turned off (`OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER=none`).
 */
export function readStepTraceSettings(env: Record<string, string | undefined>): StepTraceSettings | null {
  const value = (name: string) => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  };
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || value('OTEL_TRACES_EXPORTER') === 'none')
    return null;
  const traces = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = value('OTEL_EXPORTER_OTLP_ENDPOINT');
  const url = traces ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (url === undefined || !/^https?:\/\//.test(url)) return null;
  const timeout = Number(value('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? value('OTEL_EXPORTER_OTLP_TIMEOUT'));
  return {
    url,
    headers: {
      ...keyValues(value('OTEL_EXPORTER_OTLP_HEADERS')),
      ...keyValues(value('OTEL_EXPORTER_OTLP_TRACES_HEADERS')),
    },
    // A step waits for its span at most this long: 10 s by default, as the SDKs, never more than 30 s.
    timeoutMs: Number.isInteger(timeout) && timeout > 0 ? Math.min(timeout, 30_000) : 10_000,
    serviceName: value('OTEL_SERVICE_NAME') ?? 'zekt-action',
    resourceAttributes: keyValues(value('OTEL_RESOURCE_ATTRIBUTES')),
  };
}

/**
 * Starts the step's span under `traceparent`; null when the delivery carries no (valid) context.
 *
 * @example const span = startStepSpan(settings, zekt.traceparent, 'confirm', { 'zekt.delivery.id': id })
 */
export function startStepSpan(
  settings: StepTraceSettings | null,
  traceparent: string | undefined,
  step: string,
  attributes: Record<string, string | number>,
): StepSpan | null {
  const parent = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (!parent || /^0+$/.test(parent[1]!) || /^0+$/.test(parent[2]!)) return null;
  const [, traceId, parentSpanId, flags] = parent as unknown as [string, string, string, string];
  const spanId = randomBytes(8).toString('hex');
  const sampled = (Number.parseInt(flags, 16) & 1) === 1;
  const startNanos = nowNanos();
  return {
    traceparent: `00-${traceId}-${spanId}-${flags}`,
    async end(outcome) {
      if (settings === null || !sampled) return null;
      const span = {
        traceId,
        spanId,
        parentSpanId,
        name: `zekt.action.${step}`,
        kind: 3, // SPAN_KIND_CLIENT: the step calls Zekt.
        startTimeUnixNano: startNanos,
        endTimeUnixNano: nowNanos(),
        attributes: otlpAttributes({ ...attributes, 'zekt.outcome': outcome.ok ? 'ok' : 'failed' }),
        status: { code: outcome.ok ? 1 : 2 },
      };
      const body = {
        resourceSpans: [
          {
            resource: {
              attributes: otlpAttributes({
                ...settings.resourceAttributes,
                'service.name': settings.serviceName,
              }),
            },
            scopeSpans: [{ scope: { name: 'zekt-action' }, spans: [span] }],
          },
        ],
      };
      return exportSpans(settings, JSON.stringify(body));
    },
  };
}

/** One POST; resolves with a problem to warn about (null: exported), never rejects. */
async function exportSpans(settings: StepTraceSettings, body: string): Promise<string | null> {
  const client = new HttpClient('zekt-action', [], {
    allowRetries: false,
    maxRetries: 0,
    allowRedirects: false,
    socketTimeout: settings.timeoutMs,
  });
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<string>((done) => {
    timer = setTimeout(() => done(`no answer within ${settings.timeoutMs} ms`), settings.timeoutMs);
  });
  try {
    const sent = client
      .request('POST', settings.url, body, { 'content-type': 'application/json', ...settings.headers })
      .then(async (response) => {
        const status = response.message.statusCode ?? 0;
        await response.readBody();
        return status >= 200 && status < 300 ? null : `answered ${status}`;
      })
      .catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
    return await Promise.race([sent, gaveUp]);
  } finally {
    clearTimeout(timer);
    client.dispose();
  }
}

/**
 * Runs a consumer step (`confirm`, `complete`, `fetch-payload`) inside its span, when the delivery
 * carries trace context: sets the `traceparent` output, and exports the span whether the step
 * succeeded or failed. An export that fails is a warning; the step's own outcome is unchanged.
 */
export async function traceConsumerStep(
  step: string,
  env: Record<string, string | undefined>,
  run: () => Promise<void>,
  report: { setOutput(name: string, value: string): void; warning(message: string): void },
): Promise<void> {
  const loaded = loadDelivery(env.GITHUB_EVENT_PATH);
  const delivery = loaded.ok ? loaded.delivery : undefined;
  const settings = readStepTraceSettings(env);
  const span = startStepSpan(settings, delivery?.traceparent, step, {
    ...(delivery?.deliveryId ? { 'zekt.delivery.id': delivery.deliveryId } : {}),
    ...(delivery ? { 'zekt.run.id': String(delivery.correlationId) } : {}),
    ...(env.GITHUB_REPOSITORY ? { 'zekt.consumer.repository': env.GITHUB_REPOSITORY } : {}),
    ...(env.GITHUB_RUN_ID ? { 'zekt.consumer.run.id': env.GITHUB_RUN_ID } : {}),
    ...(Number(env.GITHUB_RUN_ATTEMPT) > 0
      ? { 'zekt.consumer.run.attempt': Number(env.GITHUB_RUN_ATTEMPT) }
      : {}),
  });
  // Without an endpoint the step records nothing: later steps continue under the dispatch itself.
  const traceparent = settings === null ? delivery?.traceparent : span?.traceparent;
  if (traceparent !== undefined && TRACEPARENT.test(traceparent))
    report.setOutput('traceparent', traceparent);
  if (span === null || settings === null) return run();
  const finish = async (ok: boolean) => {
    const problem = await span.end({ ok });
    if (problem !== null && settings !== null) {
      report.warning(
        `the step's trace span could not be exported to ${describeEndpoint(settings.url)} (OTEL_EXPORTER_OTLP_ENDPOINT): ${problem}`,
      );
    }
  };
  try {
    await run();
  } catch (error) {
    await finish(false);
    throw error;
  }
  await finish(true);
}

/** Where the span went, for a warning: the endpoint without credentials. */
export function describeEndpoint(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'the OTLP endpoint';
  }
}

function nowNanos(): string {
  return (BigInt(Date.now()) * 1_000_000n).toString();
}

function otlpAttributes(attributes: Record<string, string | number>) {
  return Object.entries(attributes).map(([key, value]) => ({
    key,
    value:
      typeof value === 'number' && Number.isInteger(value)
        ? { intValue: value }
        : { stringValue: String(value) },
  }));
}

/** `key=value,…` with percent-encoded values (the OTEL_* form); a malformed pair is left out. */
function keyValues(raw: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const part of raw?.split(',') ?? []) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    try {
      pairs[part.slice(0, at).trim()] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      // not percent-encoded properly: left out
    }
  }
  return pairs;
}
