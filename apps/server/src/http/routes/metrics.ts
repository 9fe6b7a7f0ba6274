import { sameSecret } from '../../security/same-secret.js';
import type { App, AppContext } from '../app-context.js';
import { HttpError } from '../problem.js';

/**
 * `GET /metrics`: the Prometheus text of this process. With `ZEKT_METRICS_TOKEN` set the scraper
 * must send it as a bearer token (compared in constant time); unset, the endpoint is open like
 * `/healthz`: it names no account and holds no secret (prometheus.ts), and deployments usually
 * keep it off the public listener.
 */
export function registerMetricsRoute(app: App, context: Pick<AppContext, 'scrapeMetrics' | 'metricsToken'>) {
  const expected = context.metricsToken === null ? null : `Bearer ${context.metricsToken}`;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (expected !== null) {
      const given = request.headers.authorization;
      if (given === undefined) {
        throw new HttpError(
          'unauthenticated',
          'send the metrics token: Authorization: Bearer <ZEKT_METRICS_TOKEN>',
        );
      }
      if (!sameSecret(given, expected)) {
        throw new HttpError('invalid_token', 'the metrics token does not match ZEKT_METRICS_TOKEN');
      }
    }
    const { contentType, body } = await context.scrapeMetrics();
    return reply.header('cache-control', 'no-store').type(contentType).send(body);
  });
}
