import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP relay placed between the action and the real Zekt service: it records every
 * request the action makes (and the answer it got), forwards it to the service, and can be told to
 * fail the first requests the way networks and proxies fail (a 503, a 429, a reset connection),
 * so the action's retry policy meets real failures. Without a target it is a recorder that proves
 * nothing was requested.
 */
export type RelayFault =
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'reset' };

export interface RelayedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** What the action got back: the fault, the service's answer, or 0 for a reset. */
  response: { status: number; body: string };
}

export interface Relay {
  url: string;
  requests: RelayedRequest[];
  close(): Promise<void>;
}

export async function startRelay(
  options: { target?: string; faults?: RelayFault[]; repeatFault?: RelayFault } = {},
): Promise<Relay> {
  const faults = [...(options.faults ?? [])];
  const requests: RelayedRequest[] = [];
  const server = createServer(async (request, reply) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const entry: RelayedRequest = {
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      body,
      response: { status: 0, body: '' },
    };
    requests.push(entry);
    const fault = faults.shift() ?? options.repeatFault;
    if (fault?.kind === 'reset') {
      request.socket.resetAndDestroy();
      return;
    }
    if (fault?.kind === 'status') {
      const text = fault.body === undefined ? '' : JSON.stringify(fault.body);
      entry.response = { status: fault.status, body: text };
      reply
        .writeHead(fault.status, { 'content-type': 'application/problem+json', ...fault.headers })
        .end(text);
      return;
    }
    if (!options.target) {
      entry.response = { status: 418, body: '' };
      reply.writeHead(418).end();
      return;
    }
    const forwarded = await fetch(options.target + entry.path, {
      method: entry.method,
      headers: Object.fromEntries(
        Object.entries(request.headers).filter(
          (header): header is [string, string] =>
            typeof header[1] === 'string' && !['host', 'connection', 'content-length'].includes(header[0]),
        ),
      ),
      ...(entry.method === 'GET' || entry.method === 'HEAD' ? {} : { body }),
    });
    const text = await forwarded.text();
    entry.response = { status: forwarded.status, body: text };
    reply
      .writeHead(forwarded.status, { 'content-type': forwarded.headers.get('content-type') ?? 'text/plain' })
      .end(text);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
