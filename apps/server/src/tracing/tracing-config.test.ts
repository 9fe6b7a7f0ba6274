import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';

const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n';
const complete = {
  GITHUB_APP_ID: '1001',
  GITHUB_PRIVATE_KEY: PEM,
  GITHUB_WEBHOOK_SECRET: 'whsec',
  ZEKT_SECRET: 'f'.repeat(64),
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ ...complete, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('tracing settings (the standard OTEL_* variables)', () => {
  it('is off unless an OTLP endpoint is set', () => {
    expect(loadConfig(complete).tracing).toBeNull();
    expect(
      loadConfig({ ...complete, OTEL_SERVICE_NAME: 'zekt-prod', OTEL_TRACES_SAMPLER: 'always_on' }).tracing,
    ).toBeNull();
  });

  it('sends spans to <endpoint>/v1/traces with the documented defaults', () => {
    const tracing = loadConfig({
      ...complete,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
    }).tracing;
    expect(tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
      headers: {},
      compression: 'none',
      timeoutMs: 10_000,
      serviceName: 'zekt',
      resourceAttributes: {},
      sampler: { kind: 'parentbased_always_on', ratio: 1 },
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
      scheduleDelayMs: 5_000,
      exportTimeoutMs: 30_000,
    });
  });

  it('takes the traces endpoint as given, headers, resource, sampler and queue settings', () => {
    const tracing = loadConfig({
      ...complete,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otlp.example.com/custom/traces',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D%3D,x-team=ops',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=tracing',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_SERVICE_NAME: 'zekt-eu',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,region=eu%20west',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '500',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_BSP_EXPORT_TIMEOUT: '4000',
    }).tracing;
    expect(tracing).toEqual({
      url: 'https://otlp.example.com/custom/traces',
      headers: { 'x-api-key': 'abc==', 'x-team': 'tracing' },
      compression: 'gzip',
      timeoutMs: 2500,
      serviceName: 'zekt-eu',
      resourceAttributes: { 'deployment.environment': 'prod', region: 'eu west' },
      sampler: { kind: 'parentbased_traceidratio', ratio: 0.25 },
      maxQueueSize: 100,
      // A batch is never larger than the queue.
      maxExportBatchSize: 100,
      scheduleDelayMs: 200,
      exportTimeoutMs: 4000,
    });
  });

  it('turns off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfig({ ...complete, ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing).toBeNull();
    expect(loadConfig({ ...complete, ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeNull();
    expect(loadConfig({ ...complete, ...endpoint, OTEL_SDK_DISABLED: 'false' }).tracing).not.toBeNull();
  });

  it('refuses what it cannot honour, naming the variable, never echoing a header or a password', () => {
    const problems = problemsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://user:hunter2@collector:4317',
    });
    expect(problems).toEqual([
      "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (got grpc://user:***@collector:4317): Zekt exports over OTLP/HTTP, to a collector's HTTP port (4318)",
    ]);
    const more = problemsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization Bearer s3cr3t',
      OTEL_TRACES_SAMPLER: 'sometimes',
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_BSP_MAX_QUEUE_SIZE: '0',
    });
    expect(more).toEqual([
      'OTEL_TRACES_EXPORTER must be otlp or none (got "zipkin"): Zekt exports traces over OTLP/HTTP only',
      'OTEL_EXPORTER_OTLP_PROTOCOL must be http/json (got "grpc"): Zekt sends OTLP over HTTP as JSON, which an OpenTelemetry Collector\'s otlp receiver accepts on its HTTP port (4318)',
      'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio (got "sometimes")',
      'OTEL_BSP_MAX_QUEUE_SIZE must be a whole number from 1 to 1000000 (got "0")',
      'OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas, values percent-encoded',
    ]);
    expect(more.join('\n')).not.toContain('s3cr3t');
    expect(problemsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })[0]).toMatch(
      /^OTEL_EXPORTER_OTLP_ENDPOINT must be an/,
    );
    expect(
      problemsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '2',
      }),
    ).toEqual(['OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (got "2")']);
  });
});
