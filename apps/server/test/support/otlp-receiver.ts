import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * A real OTLP/HTTP receiver for tests (`POST /v1/traces`, JSON as the OpenTelemetry JavaScript
 * exporter sends it, gzip or not), standing in for an OpenTelemetry Collector. It decodes every
 * span it receives. `mode` `hang` accepts requests and never answers (a backend that hangs).
 * https://opentelemetry.io/docs/specs/otlp/#otlphttp
 */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
  status: { code: number; message?: string };
}

export interface OtlpReceiver {
  /** The base URL: set it as OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request as it came: headers and the raw JSON text. */
  requests: Array<{ path: string; headers: IncomingMessage['headers']; body: string }>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(options: { mode?: 'ok' | 'hang' } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let raw = Buffer.concat(chunks);
      if (request.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      const body = raw.toString('utf8');
      requests.push({ path: request.url ?? '', headers: request.headers, body });
      if (options.mode === 'hang') return;
      try {
        spans.push(...decode(JSON.parse(body)));
      } catch (error) {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ message: String(error) }));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** A loopback URL nothing listens on: a tracing backend that refuses connections. */
export async function refusedOtlpUrl(): Promise<string> {
  const server = createTcpServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return `http://127.0.0.1:${port}`;
}

type Json = Record<string, unknown>;

function decode(body: Json): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of (body.resourceSpans as Json[] | undefined) ?? []) {
    const resource = attributes((resourceSpans.resource as Json | undefined)?.attributes);
    for (const scopeSpans of (resourceSpans.scopeSpans as Json[] | undefined) ?? []) {
      for (const span of (scopeSpans.spans as Json[] | undefined) ?? []) {
        const parent = id(span.parentSpanId);
        out.push({
          traceId: id(span.traceId) ?? '',
          spanId: id(span.spanId) ?? '',
          parentSpanId: parent === '' ? null : parent,
          name: String(span.name),
          kind: Number(span.kind ?? 0),
          startMs: nanosToMs(span.startTimeUnixNano),
          endMs: nanosToMs(span.endTimeUnixNano),
          attributes: attributes(span.attributes),
          resource,
          status: (span.status as ReceivedSpan['status'] | undefined) ?? { code: 0 },
        });
      }
    }
  }
  return out;
}

/** OTLP/JSON writes ids as hex; older encoders wrote base64 (both are read). */
function id(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  const text = String(value);
  return /^[0-9a-f]+$/.test(text) && (text.length === 32 || text.length === 16)
    ? text
    : Buffer.from(text, 'base64').toString('hex');
}

function nanosToMs(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'object' && value !== null && 'high' in value && 'low' in value) {
    const { high, low } = value as { high: number; low: number };
    return Number((BigInt(high) << 32n) + BigInt(low >>> 0)) / 1e6;
  }
  return Number(BigInt(String(value)) / 1000n) / 1000;
}

function attributes(list: unknown): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const entry of (list as Json[] | undefined) ?? []) {
    const value = (entry.value ?? {}) as Json;
    if ('stringValue' in value) out[String(entry.key)] = String(value.stringValue);
    else if ('intValue' in value) out[String(entry.key)] = Number(value.intValue);
    else if ('doubleValue' in value) out[String(entry.key)] = Number(value.doubleValue);
    else if ('boolValue' in value) out[String(entry.key)] = Boolean(value.boolValue);
    else out[String(entry.key)] = JSON.stringify(value);
  }
  return out;
}
