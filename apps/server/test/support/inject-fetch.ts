import type { FastifyInstance } from 'fastify';

/**
 * A `fetch` that hands each request to Fastify's `inject()`: the same routes, hooks and
 * serialisation without a socket, for the typed client of a harness whose transport is `inject`.
 */
export function injectFetch(http: FastifyInstance, host: string): (request: Request) => Promise<Response> {
  return async (request) => {
    const target = new URL(request.url);
    const payload = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    const response = await http.inject({
      method: request.method as 'GET',
      url: target.pathname + target.search,
      // The Host a loopback client would send, so nothing the service derives from it differs.
      headers: { ...Object.fromEntries(request.headers), host },
      ...(payload === undefined ? {} : { payload }),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
    }
    const empty = response.statusCode === 204 || response.statusCode === 304;
    return new Response(empty ? null : response.rawPayload, { status: response.statusCode, headers });
  };
}
