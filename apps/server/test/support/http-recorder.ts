import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP server that records the method and path of every request and answers with a
 * status (and JSON body) the test sets: a stand-in for an alert receiver or for a Zekt API.
 */
export interface HttpRecorder {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: Array<{ method: string; path: string; authorization: string | undefined }>;
  answer(status: number, body?: unknown): void;
  close(): Promise<void>;
}

export async function startHttpRecorder(status = 200, body?: unknown): Promise<HttpRecorder> {
  const requests: HttpRecorder['requests'] = [];
  let answer = { status, body };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
      });
      if (answer.body === undefined) res.writeHead(answer.status).end();
      else
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answer(next, nextBody) {
      answer = { status: next, body: nextBody };
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
