import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { Logger } from 'pino';
import type { AlertService } from '../alerts/alert-service.js';
import type { AccountLimits, HttpLimits } from '../config.js';
import type { SchemaCheckPool } from '../contracts/schema-check-pool.js';
import type { DeliveryHandoff } from '../delivery/handoff.js';
import type { Clock } from '../domain/clock.js';
import type { GitHubClient } from '../github/github-client.js';
import type { GitHubOAuth } from '../github/github-oauth.js';
import type { OidcVerifier } from '../github/oidc-verifier.js';
import type { Metrics } from '../metrics/metrics.js';
import type { DeliveryTokens } from '../security/delivery-token.js';
import type { SecretBox } from '../security/secret-box.js';
import type { AppSetup } from '../setup/app-setup.js';
import type { LiveAppCredentials } from '../setup/live-app-credentials.js';
import type { ServiceChecks } from '../startup/service-checks.js';
import type { Store } from '../store/store.js';
import type { Tracer } from '../tracing/tracer.js';

// The contract between the app that assembles the routes (app.ts) and the routes themselves: a
// leaf module, so no route imports the module that imports it. Each route takes a Pick of it.

/** Everything the HTTP layer needs, built once by `createZekt`. */
export interface AppContext {
  store: Store;
  clock: Clock;
  logger: Logger;
  baseUrl: string;
  /** GitHub as the App in use now (`appCredentials`). */
  github: GitHubClient;
  /** GitHub's OAuth web flow for the console login; null while the App in use has no OAuth client. */
  oauth: () => Promise<GitHubOAuth | null>;
  /** The App credentials in use and their source; none in setup mode. */
  appCredentials: LiveAppCredentials;
  /** Setup mode: the setup code, setup sessions, registering the App from a manifest. */
  setup: AppSetup;
  oidc: OidcVerifier;
  secretBox: SecretBox;
  deliveryTokens: DeliveryTokens;
  messageGraceMs: number;
  /** How long a durable delivery GitHub accepted may wait for its workflow before it is flagged not started. */
  notStartedAfterMs: number;
  /** GitHub's web root (the console's login form goes there). */
  githubWebUrl: string;
  /** Where the built console is; default apps/console/dist. */
  consoleDir?: string;
  /** Wakes the router: an event became due. */
  wakeRouter: () => void;
  /** Completion webhooks are routed in the transaction that stores them (this process runs the workers). */
  routeInline: boolean;
  /** This process's dispatcher, when it routes inline: it takes the deliveries it has room for at creation. */
  handoff?: DeliveryHandoff | undefined;
  /** Wakes the dispatcher: a delivery became due (replay). */
  wakeDispatcher: () => void;
  /** What one request may cost (timeouts, body bytes, JSON depth) and who counts as the client. */
  http: HttpLimits;
  /** Rate limits and per-account caps. */
  limits: AccountLimits;
  /** Where ingestion reports what it received and how fast it answered. */
  metrics: Metrics;
  /** The Prometheus text `/metrics` answers with. */
  scrapeMetrics: () => Promise<{ contentType: string; body: string }>;
  /** Bearer token `/metrics` requires (`ZEKT_METRICS_TOKEN`); null: none. */
  metricsToken: string | null;
  /** Spans of each provider run's trace (docs/operations.md, *Tracing*); absent: none. */
  tracer?: Tracer;
  /** Why this process is not ready beyond its store (GitHub refused the App's key), or null. */
  notReadyReason: () => string | null;
  /** The checks of `zekt doctor`, for the console's Settings. */
  serviceChecks: ServiceChecks;
  /** Compiles services' message schemas and checks messages against them, off the event loop. */
  schemaChecks: SchemaCheckPool;
  /** Raises alerts (a service's schema changed: its subscribers are told). */
  alerts: Pick<AlertService, 'raise'>;
  /** `/metrics` on the API's port too (`ZEKT_METRICS_ON_API_PORT`); it is always on the metrics port. */
  metricsOnApiPort: boolean;
}

export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse<IncomingMessage>,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
