import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { App, AppContext } from './app-context.js';
import { clientErrorProblem, frameworkErrorProblem, refuseWhileClosing } from './framework-errors.js';
import { installProblemHandlers } from './problem.js';
import { addSecurityHeaders } from './response-headers.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerMetricsRoute } from './routes/metrics.js';

/**
 * What a worker-only process serves on `ZEKT_METRICS_PORT`: `/healthz`, `/readyz` and `/metrics`,
 * so a worker is probed and scraped like any other process. Nothing else: no API, no ingestion.
 */
export async function buildProbeApp(
  context: Pick<AppContext, 'store' | 'appCredentials' | 'logger' | 'scrapeMetrics' | 'metricsToken'>,
): Promise<App> {
  const app = Fastify({
    loggerInstance: context.logger.child({ component: 'probes' }) as FastifyBaseLogger,
    // Probes are polled every few seconds: their request lines would drown the worker's log.
    disableRequestLogging: true,
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
