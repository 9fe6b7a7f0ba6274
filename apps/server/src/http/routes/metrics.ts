import { sameSecret } from '../../security/same-secret.js';
import type { App, AppContext } from '../app-context.js';
import { createMetricsTokenGuard } from '../metrics-token-guard.js';
import { HttpError } from '../problem.js';

/**
 * `GET /metrics`: the Prometheus text of this process, served on the private metrics port
 * (`ZEKT_METRICS_PORT`) and on the API's port only when `ZEKT_METRICS_ON_API_PORT` says so. With
 * `ZEKT_METRICS_TOKEN` set the scraper must send it as a bearer token (compared in constant time;
 * wrong ones are limited per client, metrics-token-guard.ts). The text names no account and holds
 * no secret (prometheus.ts), but it shows the deployment's activity as it happens: not for anyone.
 */
export function registerMetricsRoute(
  app: App,
  context: Pick<AppContext, 'scrapeMetrics' | 'metricsToken' | 'store' | 'clock' | 'limits'>,
) {
  const expected = context.metricsToken === null ? null : `Bearer ${context.metricsToken}`;
  const guard = createMetricsTokenGuard({
    store: context.store,
    clock: context.clock,
    wrongTokensPerMinute: context.limits.authFailuresPerMinute,
  });
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (expected !== null) {
      const given = request.headers.authorization;
      if (given === undefined) {
        throw new HttpError(
          'unauthenticated',
          'send the metrics token: Authorization: Bearer <ZEKT_METRICS_TOKEN>',
        );
      }
      await guard.refuseLockedOut(request);
      if (!sameSecret(given, expected)) {
        await guard.countWrongToken(request);
        throw new HttpError('invalid_token', 'the metrics token does not match ZEKT_METRICS_TOKEN');
      }
    }
    const { contentType, body } = await context.scrapeMetrics();
    return reply.header('cache-control', 'no-store').type(contentType).send(body);
  });
}
