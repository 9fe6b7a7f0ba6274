import type { Setting } from '../config/setting.js';
import {
  DEFAULT_SAMPLER,
  SAMPLER_KINDS,
  type SamplerKind,
  TRACING_SETTINGS,
} from '../config/tracing-settings.js';
import { redactUrl } from '../redact-url.js';

/**
 * The standard OpenTelemetry variables Zekt honours (docs/configuration.md, *Tracing*; declared in
 * config/settings.ts), parsed in config.ts's one pass: config.ts hands over its reader of the
 * environment, and every problem joins the others. Tracing is off (null) unless an OTLP endpoint is set.
 * https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/
 * https://opentelemetry.io/docs/specs/otel/protocol/exporter/
 */
export interface TracingConfig {
  /** Where spans are POSTed: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  url: string;
  /** Sent with every export (an API key of the tracing backend): never logged. */
  headers: Record<string, string>;
  compression: 'none' | 'gzip';
  /** One export gives up after this long (a backend that hangs). */
  timeoutMs: number;
  serviceName: string;
  resourceAttributes: Record<string, string>;
  sampler: { kind: SamplerKind; ratio: number };
  /** Spans waiting for export at most; more are dropped (and counted), never waited for. */
  maxQueueSize: number;
  maxExportBatchSize: number;
  /** A batch smaller than the maximum waits this long for more spans. */
  scheduleDelayMs: number;
  /** The span queue stops waiting for an export after this long, whatever the exporter does. */
  exportTimeoutMs: number;
}

export { SAMPLER_KINDS, type SamplerKind } from '../config/tracing-settings.js';

/**
 * Reads the OTEL_* variables through `value` (config.ts's reader: trimmed, '' as unset); pushes a
 * problem per bad one. Never repeats a header value or an endpoint's password in a problem.
 */
export function parseTracingConfig(
  value: (name: string) => string | undefined,
  problems: string[],
): TracingConfig | null {
  const disabled = value('OTEL_SDK_DISABLED');
  if (disabled !== undefined && disabled.toLowerCase() !== 'false' && disabled.toLowerCase() !== 'true') {
    problems.push(`OTEL_SDK_DISABLED must be true or false (got ${JSON.stringify(disabled)})`);
  }
  const exporter = value('OTEL_TRACES_EXPORTER');
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'none') {
    problems.push(
      `OTEL_TRACES_EXPORTER must be otlp or none (got ${JSON.stringify(exporter)}): Zekt exports traces over OTLP/HTTP only`,
    );
  }
  const url = endpointUrl(value, problems);
  if (url === null || disabled?.toLowerCase() === 'true' || exporter === 'none') return null;

  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = value(name);
    if (protocol !== undefined && protocol !== 'http/json') {
      problems.push(
        `${name} must be http/json (got ${JSON.stringify(protocol)}): Zekt sends OTLP over HTTP as JSON, which an OpenTelemetry Collector's otlp receiver accepts on its HTTP port (4318)`,
      );
    }
  }
  const compression =
    value('OTEL_EXPORTER_OTLP_TRACES_COMPRESSION') ?? value('OTEL_EXPORTER_OTLP_COMPRESSION');
  if (compression !== undefined && compression !== 'none' && compression !== 'gzip') {
    problems.push(`OTEL_EXPORTER_OTLP_COMPRESSION must be none or gzip (got ${JSON.stringify(compression)})`);
  }
  // The first of `names` that is set, read with the bounds and default of the table's `setting`.
  const integer = (setting: Setting<number>, ...names: string[]): number => {
    const name = names.find((n) => value(n) !== undefined) ?? names[0]!;
    return setting.read(value(name), name, problems);
  };
  const { OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE } =
    TRACING_SETTINGS;
  const { OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT, OTEL_SERVICE_NAME } = TRACING_SETTINGS;

  const samplerRaw = value('OTEL_TRACES_SAMPLER') ?? DEFAULT_SAMPLER;
  const kind = SAMPLER_KINDS.find((k) => k === samplerRaw);
  if (kind === undefined) {
    problems.push(
      `OTEL_TRACES_SAMPLER must be one of ${SAMPLER_KINDS.join(', ')} (got ${JSON.stringify(samplerRaw)})`,
    );
  }
  let ratio = 1;
  const ratioRaw = value('OTEL_TRACES_SAMPLER_ARG');
  if (ratioRaw !== undefined && kind?.endsWith('traceidratio')) {
    const parsed = Number(ratioRaw);
    if (!Number.isFinite(parsed) || parsed < 0 || parsed > 1) {
      problems.push(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (got ${JSON.stringify(ratioRaw)})`);
    } else {
      ratio = parsed;
    }
  }

  const maxQueueSize = integer(OTEL_BSP_MAX_QUEUE_SIZE, 'OTEL_BSP_MAX_QUEUE_SIZE');
  const maxExportBatchSize = Math.min(
    integer(OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    maxQueueSize,
  );
  return {
    url,
    headers: {
      ...keyValues('OTEL_EXPORTER_OTLP_HEADERS', value, problems, { secret: true }),
      ...keyValues('OTEL_EXPORTER_OTLP_TRACES_HEADERS', value, problems, { secret: true }),
    },
    compression: compression === 'gzip' ? 'gzip' : 'none',
    timeoutMs: integer(
      OTEL_EXPORTER_OTLP_TIMEOUT,
      'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
      'OTEL_EXPORTER_OTLP_TIMEOUT',
    ),
    serviceName: OTEL_SERVICE_NAME.read(value('OTEL_SERVICE_NAME'), 'OTEL_SERVICE_NAME', problems),
    resourceAttributes: keyValues('OTEL_RESOURCE_ATTRIBUTES', value, problems, { secret: false }),
    sampler: { kind: kind ?? DEFAULT_SAMPLER, ratio },
    maxQueueSize,
    maxExportBatchSize,
    scheduleDelayMs: integer(OTEL_BSP_SCHEDULE_DELAY, 'OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMs: integer(OTEL_BSP_EXPORT_TIMEOUT, 'OTEL_BSP_EXPORT_TIMEOUT'),
  };
}

/** The traces URL: the signal's own endpoint as given, or the base endpoint + `/v1/traces`. */
function endpointUrl(value: (name: string) => string | undefined, problems: string[]): string | null {
  for (const [name, suffix] of [
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ''],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', '/v1/traces'],
  ] as const) {
    const raw = value(name);
    if (raw === undefined) continue;
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      problems.push(`${name} must be an absolute http(s) URL such as http://otel-collector:4318`);
      return null;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      problems.push(
        `${name} must be an http(s) URL (got ${redactUrl(raw)}): Zekt exports over OTLP/HTTP, to a collector's HTTP port (4318)`,
      );
      return null;
    }
    return suffix === '' ? raw : `${raw.replace(/\/+$/, '')}${suffix}`;
  }
  return null;
}

/** `key=value,key2=value2`, values percent-decoded (the W3C Baggage form the OTEL_* variables use). */
function keyValues(
  name: string,
  value: (name: string) => string | undefined,
  problems: string[],
  options: { secret: boolean },
): Record<string, string> {
  const raw = value(name);
  if (raw === undefined) return {};
  const pairs: Record<string, string> = {};
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const at = part.indexOf('=');
    const key = at > 0 ? part.slice(0, at).trim() : '';
    let decoded: string | null = null;
    try {
      decoded = at > 0 ? decodeURIComponent(part.slice(at + 1).trim()) : null;
    } catch {
      decoded = null;
    }
    if (key === '' || decoded === null || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) {
      problems.push(
        `${name} must be key=value pairs separated by commas, values percent-encoded${options.secret ? '' : ` (got ${JSON.stringify(raw)})`}`,
      );
      return {};
    }
    pairs[key] = decoded;
  }
  return pairs;
}
