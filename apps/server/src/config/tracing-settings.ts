import { integer, passedOn, type Setting, text } from './setting.js';

export const SAMPLER_KINDS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerKind = (typeof SAMPLER_KINDS)[number];
export const DEFAULT_SAMPLER: SamplerKind = 'parentbased_always_on';

/**
 * The standard OpenTelemetry variables Zekt honours, declared like the others (settings.ts) but
 * read by tracing-config.ts, and only when tracing is on: a stray OTEL_* variable of another tool
 * never stops Zekt while it does not trace. Words are checked there; numbers and defaults here.
 */
export const TRACING_SETTINGS = {
  OTEL_EXPORTER_OTLP_ENDPOINT: passedOn({
    group: 'tracing',
    help: 'OTLP/HTTP base URL (spans go to <url>/v1/traces); unset: tracing off',
    doc: "base URL of an OTLP/HTTP receiver (an OpenTelemetry Collector's HTTP port, `http://collector:4318`); spans are POSTed to `<url>/v1/traces`",
    docDefault: 'unset: tracing off',
    shown: null,
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: passedOn({
    group: 'tracing',
    help: 'the full traces URL, instead of the base URL',
    doc: 'the full traces URL, used as given; wins over the base URL',
    shown: null,
  }),
  OTEL_EXPORTER_OTLP_HEADERS: passedOn({
    group: 'tracing',
    help: 'key=value,… sent with every export (also OTEL_EXPORTER_OTLP_TRACES_HEADERS)',
    doc: "`key=value,key2=value2` (values percent-encoded) sent with every export, e.g. a backend's API key; the traces-only ones win",
    shown: null,
  }),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: passedOn({
    group: 'tracing',
    help: 'headers for traces only; win over the above',
    doc: '',
    sameRowAs: 'OTEL_EXPORTER_OTLP_HEADERS',
    shown: null,
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: passedOn({
    group: 'tracing',
    help: 'http/json, the only one',
    doc: "the only protocol Zekt speaks: OTLP over HTTP with JSON bodies (`grpc` and `http/protobuf` are refused at start-up; every Collector's `otlp` receiver accepts JSON on its HTTP port); the traces-only name likewise",
    shown: 'http/json',
  }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: passedOn({
    group: 'tracing',
    help: 'the same, for traces only',
    doc: '',
    sameRowAs: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    shown: 'http/json',
  }),
  OTEL_EXPORTER_OTLP_TIMEOUT: integer({
    group: 'tracing',
    help: 'one export gives up after this many ms',
    doc: 'ms one export may take (the traces-only name wins); then its spans are dropped and counted. A stopping process waits for its last export at most this long, and never more than 5 s',
    default: 10_000,
    min: 100,
    max: 600_000,
  }),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: passedOn({
    group: 'tracing',
    help: 'the same, for traces only; wins over the above',
    doc: '',
    sameRowAs: 'OTEL_EXPORTER_OTLP_TIMEOUT',
    shown: '10000',
    // Read with OTEL_EXPORTER_OTLP_TIMEOUT's bounds (tracing-config.ts): the traces-only name wins.
  }),
  OTEL_EXPORTER_OTLP_COMPRESSION: passedOn({
    group: 'tracing',
    help: 'none or gzip',
    doc: '`none` or `gzip` (the traces-only name wins)',
    shown: 'none',
  }),
  OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: passedOn({
    group: 'tracing',
    help: 'the same, for traces only; wins over the above',
    doc: '',
    sameRowAs: 'OTEL_EXPORTER_OTLP_COMPRESSION',
    shown: 'none',
  }),
  OTEL_SERVICE_NAME: text({
    group: 'tracing',
    help: 'service.name of the spans',
    doc: '`service.name` of the spans',
    default: 'zekt',
  }),
  OTEL_RESOURCE_ATTRIBUTES: passedOn({
    group: 'tracing',
    help: 'key=value,… added to every span’s resource',
    doc: "`key=value,…` added to the spans' resource (`deployment.environment=prod`)",
    shown: null,
  }),
  OTEL_TRACES_SAMPLER: passedOn({
    group: 'tracing',
    help: SAMPLER_KINDS.join(', '),
    doc: `${SAMPLER_KINDS.map((k) => `\`${k}\``).join(', ')}. The trace id comes from the run key, so a ratio keeps or drops whole runs on every process`,
    shown: DEFAULT_SAMPLER,
  }),
  OTEL_TRACES_SAMPLER_ARG: passedOn({
    group: 'tracing',
    help: 'the ratio of the traceidratio samplers, 0 to 1',
    doc: 'the ratio (0 to 1) of the `traceidratio` samplers',
    shown: '1',
  }),
  OTEL_TRACES_EXPORTER: passedOn({
    group: 'tracing',
    help: 'otlp or none (tracing off)',
    doc: '`none` turns tracing off with the endpoint set',
    shown: 'otlp',
  }),
  OTEL_SDK_DISABLED: passedOn({
    group: 'tracing',
    help: 'true turns tracing off',
    doc: '`true` turns tracing off with the endpoint set',
    shown: 'false',
  }),
  OTEL_BSP_MAX_QUEUE_SIZE: integer({
    group: 'tracing',
    help: 'spans waiting for export at most, then dropped',
    doc: 'spans waiting for export at most; beyond it spans are dropped (`zekt_trace_spans_dropped_total{reason="queue_full"}`), never waited for',
    default: 2048,
    min: 1,
    max: 1_000_000,
  }),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: integer({
    group: 'tracing',
    help: 'spans per export at most',
    doc: 'spans per export at most (at most the queue size)',
    default: 512,
    min: 1,
    max: 1_000_000,
  }),
  OTEL_BSP_SCHEDULE_DELAY: integer({
    group: 'tracing',
    help: 'ms a partial batch waits for more spans',
    doc: 'ms a batch smaller than the maximum waits for more spans before it is exported',
    default: 5_000,
    min: 0,
    max: 600_000,
  }),
  OTEL_BSP_EXPORT_TIMEOUT: integer({
    group: 'tracing',
    help: 'ms the queue waits for one export at most',
    doc: 'ms the queue waits for one export whatever the exporter does, before it moves on (a backstop behind `OTEL_EXPORTER_OTLP_TIMEOUT`)',
    default: 30_000,
    min: 100,
    max: 600_000,
  }),
} satisfies Record<string, Setting<unknown>>;

export type TracingSettingName = keyof typeof TRACING_SETTINGS;
