import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import type { App, AppContext } from './app-context.js';
import { clientErrorProblem, frameworkErrorProblem, refuseWhileClosing } from './framework-errors.js';
import { installProblemHandlers } from './problem.js';
import { addSecurityHeaders } from './response-headers.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerMetricsRoute } from './routes/metrics.js';
import { serverTimeouts } from './server-timeouts.js';

/**
 * What every process serves on its private metrics port (`ZEKT_METRICS_PORT`, on
 * `ZEKT_METRICS_HOST`): `/healthz`, `/readyz` and `/metrics`, so an API process is scraped off its
 * public port and a worker-only process is probed and scraped like any other. Nothing else: no
 * API, no ingestion. The same request timeouts as the API: a port that is private is not a port
 * nobody can hold open with slow headers.
 */
export async function buildProbeApp(
  context: Pick<
    AppContext,
    | 'store'
    | 'clock'
    | 'logger'
    | 'scrapeMetrics'
    | 'metricsToken'
    | 'limits'
    | 'http'
    | 'notReadyReason'
    | 'appCredentials'
  >,
): Promise<App> {
  const app = Fastify({
    loggerInstance: context.logger.child({ component: 'probes' }) as FastifyBaseLogger,
    // Probes are polled every few seconds: their request lines would drown the process's log.
    logController: new LogController({ disableRequestLogging: true }),
    ...serverTimeouts(context.http),
    trustProxy: context.http.trustProxy,
    frameworkErrors: frameworkErrorProblem,
    clientErrorHandler: clientErrorProblem,
    return503OnClosing: false,
  }) as unknown as App;
  installProblemHandlers(app);
  refuseWhileClosing(app);
  addSecurityHeaders(app, { https: false });
  registerHealthRoutes(app, context);
  registerMetricsRoute(app, context);
  return app;
}
