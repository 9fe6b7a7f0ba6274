import type { FastifyInstance } from 'fastify';
import { mintForRun } from '../oidc-tokens.js';
import type { SimContext } from '../sim-context.js';
import { oidcIssuerUrl } from '../sim-urls.js';
import { getRequestState } from './request-state.js';
import { installRequestTracking } from './request-tracking.js';

/**
 * Register with `{ prefix: '/_services/token' }`: the Actions OIDC issuer (discovery + JWKS) and the
 * runtime endpoint a step calls for a token (`ACTIONS_ID_TOKEN_REQUEST_URL`).
 * https://docs.github.com/actions/reference/security/oidc
 */
export async function oidcPlugin(instance: FastifyInstance, options: { ctx: SimContext }): Promise<void> {
  const { ctx } = options;
  installRequestTracking(instance, ctx, null);

  instance.get('/.well-known/openid-configuration', async () => ctx.oidc.discovery(oidcIssuerUrl(ctx.urls)));
  instance.get('/.well-known/jwks', async () => ctx.oidc.jwks());

  instance.get<{ Querystring: { audience?: string } }>('/idtoken', async (request, reply) => {
    const match = /^bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    const record = match?.[1] === undefined ? undefined : ctx.state.runtimeTokens.get(match[1]);
    const run = record === undefined ? undefined : ctx.state.runs.get(record.runId);
    const state = getRequestState(request);
    if (record === undefined || run === undefined) {
      if (state !== undefined)
        state.auth = { kind: 'rejected', reason: 'unknown ACTIONS_ID_TOKEN_REQUEST_TOKEN' };
      return reply.code(401).send({ message: 'Bad credentials: unknown ACTIONS_ID_TOKEN_REQUEST_TOKEN' });
    }
    if (state !== undefined) state.auth = { kind: 'actions-runtime', runId: run.id };
    const audience = request.query.audience === '' ? undefined : request.query.audience;
    return { value: await mintForRun(ctx, run, record.attempt, audience) };
  });

  instance.setNotFoundHandler((_request, reply) => reply.code(404).send({ message: 'Not Found' }));
}
