import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received: what a webhook signature covers. */
  rawBody: Buffer;
  /** The body parsed as JSON, or null when it is not JSON. */
  json: unknown;
}

export interface ReceiverResponse {
  status: number;
  body?: unknown;
}

export interface Receiver {
  /** e.g. `http://127.0.0.1:40123` */
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** Waits (up to `timeoutMs`) for a request matching `predicate`, including ones already received. */
  waitFor(predicate: (request: ReceivedRequest) => boolean, timeoutMs?: number): Promise<ReceivedRequest>;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that records every request (raw bytes included) and answers with
 * `respond` (default 200 `{ ok: true }`). Tests use it as a webhook receiver and as a fake
 * Zekt endpoint.
 */
export async function startReceiver(
  respond: (request: ReceivedRequest) => ReceiverResponse = () => ({ status: 200, body: { ok: true } }),
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const events = new EventEmitter();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let json: unknown = null;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        json = null;
      }
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody,
        json,
      };
      requests.push(received);
      events.emit('request', received);
      const { status, body } = respond(received);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body === undefined ? '' : JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    waitFor(predicate, timeoutMs = 5_000) {
      const existing = requests.find(predicate);
      if (existing !== undefined) return Promise.resolve(existing);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          events.off('request', listener);
          reject(new Error(`no matching request within ${timeoutMs} ms; received ${requests.length}`));
        }, timeoutMs);
        const listener = (request: ReceivedRequest) => {
          if (!predicate(request)) return;
          clearTimeout(timer);
          events.off('request', listener);
          resolve(request);
        };
        events.on('request', listener);
      });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
