import { Transform } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { HttpLimits } from '../config.js';
import { HttpError } from './problem.js';

/**
 * What request bodies may cost, for every route:
 *
 * - a body longer than the route accepts is refused from its `Content-Length`, before it is read;
 * - the bytes of bodies being read or held by a route are capped (`bodyBytesInFlight`): a request
 *   that would go over is answered 503 with Retry-After — from its `Content-Length` when it has
 *   one, else as its chunks arrive — so a flood of large unauthenticated bodies (webhooks must be
 *   read whole before their signature can be checked) cannot take the process's memory;
 * - a body must arrive within `requestTimeoutMs`, else 408, so a slow sender cannot hold a
 *   connection and its buffer for minutes.
 *
 * The budget is per process and per route: it protects this process's memory, which is what it
 * is for, and one route's flood leaves the others their budget.
 */
const RETRY_AFTER_SECONDS = '1';

export function guardRequestBodies(
  app: FastifyInstance,
  limits: Pick<HttpLimits, 'bodyBytesInFlight' | 'requestTimeoutMs'>,
): void {
  const inFlight = new Map<string, number>();
  const busy = () =>
    new HttpError(
      'server_unavailable',
      'this endpoint is receiving as many request bytes as it takes at once (ZEKT_BODY_BYTES_IN_FLIGHT); retry shortly',
      {},
      { headers: { 'retry-after': RETRY_AFTER_SECONDS } },
    );

  // Requests whose body was not read to its end when the answer goes out (refused early).
  const unread = new WeakSet<object>();
  app.addHook('onSend', async (request, reply, payload) => {
    // The rest of such a body would be parsed as the next request on the connection: close it.
    if (unread.has(request)) reply.header('connection', 'close');
    return payload;
  });

  app.addHook('preParsing', async (request, reply, payload) => {
    const declared = Number(request.headers['content-length']);
    const known = Number.isFinite(declared) && request.headers['transfer-encoding'] === undefined;
    if (known && declared <= 0) return payload;
    if (!known && request.headers['transfer-encoding'] === undefined) return payload;
    unread.add(request);
    const limit = request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY;
    if (known && declared > limit) {
      throw new HttpError(
        'payload_too_large',
        `the body is ${declared} bytes; this endpoint takes at most ${limit}`,
      );
    }
    const route = `${request.method} ${request.routeOptions.url ?? '*'}`;
    let held = 0;
    const reserve = (bytes: number) => {
      const total = (inFlight.get(route) ?? 0) + bytes;
      if (total > limits.bodyBytesInFlight) throw busy();
      inFlight.set(route, total);
      held += bytes;
    };
    if (known) reserve(declared);
    let timer: NodeJS.Timeout | undefined;
    // The bytes stay held until the answer is out: the parsed body lives as long as the request.
    reply.raw.once('close', () => {
      clearTimeout(timer);
      inFlight.set(route, (inFlight.get(route) ?? held) - held);
      held = 0;
    });
    // A body whose every declared byte is here already (it came with its headers, as a webhook's
    // mostly does) can neither arrive late nor run over its reservation: it goes on as it is,
    // without the stream and the timer a body still arriving needs. Node marks the request
    // `complete` only on a later turn, so the bytes buffered are what tells.
    if (known && request.raw.readableLength >= declared) {
      unread.delete(request);
      return payload;
    }
    const guarded = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        try {
          if (!known) reserve(chunk.length);
        } catch (error) {
          done(error as Error);
          return;
        }
        done(null, chunk);
      },
    });
    timer = setTimeout(() => {
      guarded.destroy(
        new HttpError(
          'request_timeout',
          `the body did not arrive within ${limits.requestTimeoutMs} ms (ZEKT_REQUEST_TIMEOUT_MS)`,
        ),
      );
    }, limits.requestTimeoutMs);
    guarded.once('end', () => {
      clearTimeout(timer);
      unread.delete(request);
    });
    payload.once('error', (error) => guarded.destroy(error));
    return payload.pipe(guarded);
  });
}
