import type { FastifyInstance } from 'fastify';
import { GENERIC_DOCUMENTATION_URL, GitHubApiError } from '../github-error.js';
import type { SimContext } from '../sim-context.js';
import { registerAppRoutes } from './app-routes.js';
import { registerDispatchRoutes } from './dispatch-routes.js';
import { installFaultInjection } from './fault-injection.js';
import { registerHookDeliveryRoutes } from './hook-delivery-routes.js';
import { registerHookRoutes } from './hook-routes.js';
import { RateLimits } from './rate-limit.js';
import { registerRepositoryRoutes } from './repository-routes.js';
import { authenticate } from './request-auth.js';
import { getRequestState } from './request-state.js';
import { installRequestTracking } from './request-tracking.js';
import { registerRunRoutes } from './run-routes.js';
import { registerUserRoutes } from './user-routes.js';

/** Register with `{ prefix: '/api/v3' }`: GitHub's REST API as GitHub Enterprise Server lays it out. */
export async function apiPlugin(api: FastifyInstance, options: { ctx: SimContext }): Promise<void> {
  const { ctx } = options;
  // Bodies stay text here so that malformed JSON gets GitHub's own 400 (see json-body.ts).
  api.removeAllContentTypeParsers();
  api.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  installRequestTracking(api, ctx, new RateLimits());
  installFaultInjection(api, ctx);

  api.setErrorHandler((error, request, reply) => {
    if (error instanceof GitHubApiError)
      return reply.code(error.status).headers(error.headers).send(error.body);
    const code = (error as { code?: unknown }).code;
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply
        .code(413)
        .send({ message: 'Payload Too Large', documentation_url: GENERIC_DOCUMENTATION_URL, status: '413' });
    }
    const state = getRequestState(request);
    if (state !== undefined)
      state.error = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return reply
      .code(500)
      .send({ message: 'Server Error', documentation_url: GENERIC_DOCUMENTATION_URL, status: '500' });
  });
  // GitHub authenticates before routing: bad credentials are 401 even on unknown paths, and
  // good ones count against the caller's rate limit.
  api.setNotFoundHandler(async (request, reply) => {
    await authenticate(ctx, request);
    return reply
      .code(404)
      .send({ message: 'Not Found', documentation_url: GENERIC_DOCUMENTATION_URL, status: '404' });
  });

  registerAppRoutes(api, ctx);
  registerRepositoryRoutes(api, ctx);
  registerHookRoutes(api, ctx);
  registerHookDeliveryRoutes(api, ctx);
  registerDispatchRoutes(api, ctx);
  registerRunRoutes(api, ctx);
  registerUserRoutes(api, ctx);
}
