import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { App, AppContext } from './app-context.js';
import { authenticateCallers } from './authenticate.js';
import { guardRequestBodies } from './body-budget.js';
import { clientErrorProblem, frameworkErrorProblem, refuseWhileClosing } from './framework-errors.js';
import { acceptOnlyBoundedJson } from './json-parser.js';
import { refuseNulCharacters } from './nul-characters.js';
import { installProblemHandlers } from './problem.js';
import { createRateLimiter, limitFailedAuthentication } from './rate-limits.js';
import { AccessLogController, requestForLog } from './request-log.js';
import { addSecurityHeaders } from './response-headers.js';
import { registerAlertRoutes } from './routes/alerts.js';
import { registerAppSettingsRoute } from './routes/app-settings.js';
import { registerAuditRoutes } from './routes/audit.js';
import { registerAuthRoutes } from './routes/auth.js';
import { registerConnectionRoutes } from './routes/connections.js';
import { registerConsoleRoutes } from './routes/console.js';
import { registerConsumerRoutes } from './routes/consumer-api.js';
import { registerDeliveryRoutes } from './routes/deliveries.js';
import { registerDirectoryRoutes } from './routes/directory.js';
import { registerEventsReceiveRoute } from './routes/events-receive.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerMeRoutes } from './routes/me.js';
import { registerMetricsRoute } from './routes/metrics.js';
import { registerRecoveryRoutes } from './routes/recoveries.js';
import { registerRepositoryRoutes } from './routes/repositories.js';
import { registerServiceCheckRoutes } from './routes/service-checks.js';
import { registerServiceSchemaRoutes } from './routes/service-schemas.js';
import { registerServiceRoutes } from './routes/services.js';
import { registerSetupRoutes } from './routes/setup.js';
import { registerSubscriptionRoutes } from './routes/subscriptions.js';
import { registerTokenRoutes } from './routes/tokens.js';
import { registerUsageRoutes } from './routes/usage.js';
import { registerWebhookRoute } from './routes/webhooks.js';
import { serverTimeouts } from './server-timeouts.js';
import { warnOfUntrustedProxy } from './untrusted-proxy-warning.js';

/**
 * The Fastify app: ingestion (`/webhooks/github`, `/api/events/receive`), the management API
 * (`/api/v1`, bearer tokens), health, and the OpenAPI document at `/api/openapi.json`.
 */
export async function buildHttpApp(context: AppContext): Promise<App> {
  const app: App = Fastify({
    loggerInstance: context.logger.child({}, { serializers: { req: requestForLog } }) as FastifyBaseLogger,
    logController: new AccessLogController(),
    // Strict validation: no silent type coercion or stripping of unknown fields.
    ajv: {
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false },
    },
    bodyLimit: 1024 * 1024,
    ...serverTimeouts(context.http),
    trustProxy: context.http.trustProxy,
    frameworkErrors: frameworkErrorProblem,
    clientErrorHandler: clientErrorProblem,
    // Answered below as a problem instead of Fastify's own JSON.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  installProblemHandlers(app);
  // Parses `Cookie` before any hook reads the session; `reply.setCookie` writes each Set-Cookie (cookies.ts).
  await app.register(cookie);
  warnOfUntrustedProxy(app, { trustProxy: context.http.trustProxy, logger: context.logger });
  refuseWhileClosing(app);
  addSecurityHeaders(app, { https: context.baseUrl.startsWith('https://') });
  acceptOnlyBoundedJson(app, context.http.maxJsonDepth);
  guardRequestBodies(app, context.http);
  refuseNulCharacters(app);
  const rateLimiter = createRateLimiter({
    store: context.store,
    clock: context.clock,
    limits: context.limits,
  });
  limitFailedAuthentication(app, rateLimiter);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Zekt API',
        version: '1',
        description:
          'Management API (`/api/v1`, bearer API tokens), message ingestion for the Zekt action, and the GitHub webhook receiver.',
      },
      components: {
        securitySchemes: {
          apiToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'API token (zkt_…) from `zekt token create`',
          },
          consoleSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'zekt_session',
            description:
              'the console session from the GitHub login at /auth/login (`__Host-zekt_session` over https); changes must come with the console Origin',
          },
          actionsOidc: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'GitHub Actions OIDC token',
          },
          deliveryToken: {
            type: 'http',
            scheme: 'bearer',
            description:
              "a delivery's own token (client_payload.zekt.token, zdt_…), valid for that delivery only",
          },
        },
      },
    },
  });

  registerHealthRoutes(app, context);
  // On the public port only when the operator says so (ZEKT_METRICS_ON_API_PORT, with a token).
  if (context.metricsOnApiPort) registerMetricsRoute(app, context);
  registerWebhookRoute(app, { ...context, rateLimiter });
  registerEventsReceiveRoute(app, context);
  registerConsumerRoutes(app, context);
  registerAuthRoutes(app, context);
  await app.register(async (scope) => {
    const api = scope.withTypeProvider<TypeBoxTypeProvider>();
    authenticateCallers(api, {
      ...context,
      secureCookies: context.baseUrl.startsWith('https://'),
      rateLimiter,
    });
    registerMeRoutes(api, context);
    registerRepositoryRoutes(api, context);
    registerServiceRoutes(api, context);
    registerServiceSchemaRoutes(api, context);
    registerDirectoryRoutes(api, context);
    registerSubscriptionRoutes(api, context);
    registerUsageRoutes(api, context);
    registerDeliveryRoutes(api, context);
    registerConnectionRoutes(api, context);
    registerAuditRoutes(api, context);
    registerAlertRoutes(api, context);
    registerRecoveryRoutes(api, context);
    registerTokenRoutes(api, context);
    registerServiceCheckRoutes(api, context);
    registerAppSettingsRoute(api, context);
  });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  const consolePage = await registerConsoleRoutes(app, {
    githubWebUrl: context.githubWebUrl,
    ...(context.consoleDir ? { consoleDir: context.consoleDir } : {}),
  });
  registerSetupRoutes(app, { ...context, consolePage });
  return app;
}
