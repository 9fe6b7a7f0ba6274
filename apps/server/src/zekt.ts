import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { exhaustedAlert, notStartedAlerts } from './alerts/alert-payloads.js';
import { type AlertService, createAlertService } from './alerts/alert-service.js';
import { createBackgroundLoops, type LoopSpec } from './background-loops.js';
import type { Config } from './config.js';
import { createSchemaCheckPool } from './contracts/schema-check-pool.js';
import { createDispatcher, type Dispatcher } from './delivery/dispatcher.js';
import { createNotStartedMonitor, type NotStartedMonitor } from './delivery/not-started-monitor.js';
import { createRecoveryRunner } from './delivery/recovery-runner.js';
import { createRunFollower, type RunFollower } from './delivery/run-follower.js';
import { HEALTH_CHECK_INTERVAL_MS } from './domain/alerts.js';
import { type Clock, systemClock } from './domain/clock.js';
import { RETENTION_MS } from './domain/retention.js';
import { createCurrentAppClient, createCurrentAppOAuth } from './github/current-app-client.js';
import type { GitHubClient } from './github/github-client.js';
import { createOidcVerifier } from './github/oidc-verifier.js';
import { buildHttpApp } from './http/app.js';
import { buildProbeApp } from './http/probe-app.js';
import { redactLogObject } from './log-redaction.js';
import { createPrometheusMetrics, type PrometheusMetrics } from './metrics/prometheus.js';
import { createReconciler, type Reconciler } from './reconcile/reconciler.js';
import { createRetentionSweeper, type RetentionSweeper } from './retention/retention-sweeper.js';
import { type Role, runsPart } from './role.js';
import { createEventRouter, type EventRouter } from './routing/event-router.js';
import { createDeliveryTokens } from './security/delivery-token.js';
import { createSecretBox } from './security/secret-box.js';
import { parseWebhookSecret } from './security/standard-webhooks.js';
import { type AppSetup, createAppSetup } from './setup/app-setup.js';
import { createLiveAppCredentials, type LiveAppCredentials } from './setup/live-app-credentials.js';
import { setupUrlOf } from './startup/app-credentials.js';
import { listenOn } from './startup/listen.js';
import { createServiceChecks } from './startup/service-checks.js';
import { nextEventDueAt } from './store/events.js';
import { createLocalNotifier, createPostgresNotifier } from './store/notifier.js';
import { readQueueStats } from './store/queue-stats.js';
import { openStore, type Store } from './store/store.js';
import { storeErrorCategory } from './store/store-errors.js';
import { loadTracer } from './tracing/load-tracer.js';
import type { Tracer } from './tracing/tracer.js';

export type { Role };

/** The background loops, by name (see the table in createZekt). */
type LoopName =
  | 'router'
  | 'dispatcher'
  | 'run-follower'
  | 'retention'
  | 'reconciler'
  | 'not-started'
  | 'alerts'
  | 'recoveries';

export interface ZektOptions {
  config: Config;
  role?: Role;
  clock?: Clock;
  logger?: Logger;
  /** An already opened store (tests share one); otherwise opened from the config. */
  store?: Store;
  github?: GitHubClient;
  /** A tracer of the caller's; otherwise loaded from the configuration (none without an OTLP endpoint). */
  tracer?: Tracer;
  /** Why this process is not ready beyond its store (`/readyz`): the App check of `zekt serve`. */
  notReadyReason?: () => string | null;
}

export interface Zekt {
  readonly store: Store;
  readonly http: FastifyInstance;
  readonly router: EventRouter;
  readonly dispatcher: Dispatcher;
  readonly sweeper: RetentionSweeper;
  /** Operational alerts: raised, deduplicated, sent signed (ZEKT_ALERT_URL). */
  readonly alerts: AlertService;
  /** Finds webhooks GitHub failed to deliver and asks for them again (`zekt reconcile`). */
  readonly reconciler: Reconciler;
  /** Flags durable deliveries whose consumer workflow never started. */
  readonly notStarted: NotStartedMonitor;
  /** Reads the consumer runs of workflow_dispatch deliveries Zekt follows itself. */
  readonly runFollower: RunFollower;
  /** This instance's Prometheus registry (`/metrics`). */
  readonly metrics: PrometheusMetrics;
  /** The GitHub App credentials in use and their source; none in setup mode. */
  readonly appCredentials: LiveAppCredentials;
  /** Setup mode: the setup URL (`setupUrl()`, null once an App is configured) and registering the App. */
  readonly setup: AppSetup;
  /**
   * Starts listening and the background loops (worker); resolves to the listening URL: the API's,
   * or a worker-only process's probe port (`/healthz`, `/readyz`, `/metrics`).
   */
  start(): Promise<string | null>;
  /** Where this process serves `/metrics`, `/healthz` and `/readyz` (ZEKT_METRICS_PORT), once started. */
  readonly metricsUrl: string | null;
  stop(): Promise<void>;
}

/**
 * Redaction keeps secrets out of logs even when a request or error is logged whole (log-redaction.ts).
 * JSON lines to standard output unless given another destination (`zekt dev` gives a readable one).
 *
 * Standard output is written asynchronously: lines logged while a write is under way go out
 * together in the next one, and what is left is flushed when the process exits. A synchronous
 * write per line (pino's default) was 2 % of the server's CPU under `zekt bench`; what an
 * asynchronous write can lose is the last milliseconds of lines of a process killed with SIGKILL,
 * never stored data (docs/operations.md). Batching lines further (sonic-boom's `minLength`) saved
 * about 4 % of the API process's CPU per webhook but held a warning back behind a write under way,
 * so it is not used (docs/performance.md).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = { level, formatters: { log: redactLogObject } };
  const logger = pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
  // pino formats a child's bindings with no formatter of ours: they are redacted as they are
  // bound. Every child, a child's child too, inherits this `child`.
  const child = logger.child;
  logger.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, redactLogObject(bindings), childOptions);
  } as typeof child;
  return logger;
}

/**
 * Builds the service from its configuration: the composition root. Nothing else constructs
 * adapters, so every test can build the same graph with its own clock, store and GitHub.
 */
export async function createZekt(options: ZektOptions): Promise<Zekt> {
  const { config } = options;
  const role = options.role ?? 'all';
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  const store =
    options.store ??
    (await openStore(
      // The server runs for long and writes much: its WAL is checkpointed off the event loop.
      config.database.kind === 'sqlite'
        ? { ...config.database, backgroundCheckpoint: true }
        : config.database,
    ));
  try {
    await store.migrate();
  } catch (error) {
    if (!options.store) await store.close().catch(() => undefined);
    throw error;
  }

  // The App may be registered through setup while the process runs: everything that acts as the
  // App asks for its credentials when it acts (setup/live-app-credentials.ts).
  const appCredentials = createLiveAppCredentials({ store, config, clock });
  try {
    // A stored App that ZEKT_SECRET cannot open is an operator's mistake: stop here, saying so.
    await appCredentials.get({ fresh: true });
  } catch (error) {
    if (!options.store) await store.close().catch(() => undefined);
    throw error;
  }
  const github =
    options.github ??
    createCurrentAppClient({ credentials: (ask) => appCredentials.get(ask), apiUrl: config.github.apiUrl });
  const deliveryTokens = createDeliveryTokens(config.secret);
  const workerId = config.workerId ?? `worker-${randomUUID()}`;
  const notifier =
    config.database.kind === 'postgres'
      ? createPostgresNotifier({ db: store.db, url: config.database.url, logger })
      : createLocalNotifier();

  const metrics = createPrometheusMetrics({
    queueStats: (now) => readQueueStats(store.db, now),
    now: () => clock.now(),
  });
  const stopCountingStoreErrors = store.onError((error) => metrics.storeFailed(storeErrorCategory(error)));
  const tracer =
    options.tracer ?? (await loadTracer(config.tracing, { metrics, role, instanceId: workerId }));

  // The loops are declared below, once what they run exists; what is built before them wakes
  // them by name.
  let loops: { wake(name: LoopName): void } | null = null;
  const wake = (name: LoopName) => () => loops?.wake(name);

  const alerts = createAlertService({
    store,
    clock,
    logger: logger.child({ component: 'alerts' }),
    settings: {
      url: config.alerts.url,
      key: config.alerts.secret === null ? null : parseWebhookSecret(config.alerts.secret),
      dedupWindowMs: config.alerts.dedupWindowMs,
    },
    owner: workerId,
  });
  const schemaChecks = createSchemaCheckPool({
    threads: config.schemas.threads,
    validationTimeoutMs: config.schemas.validationTimeoutMs,
    compileTimeoutMs: config.schemas.compileTimeoutMs,
    onStopped: (reason) =>
      logger.warn(
        { reason },
        reason === 'timeout'
          ? 'a schema check passed its time bound and was stopped (ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS)'
          : 'a schema check ran out of memory and was stopped',
      ),
  });
  const dispatcher = createDispatcher({
    store,
    clock,
    logger: logger.child({ component: 'dispatcher' }),
    github,
    deliveryTokens,
    baseUrl: config.baseUrl,
    workerId,
    leaseMs: config.leaseMs,
    concurrency: config.dispatchConcurrency,
    installationConcurrency: config.installationConcurrency,
    onCapacity: wake('dispatcher'),
    requestTimeoutMs: config.dispatchTimeoutMs,
    retryScheduleMs: config.retryScheduleMs,
    runFollowScheduleMs: config.runFollowScheduleMs,
    onRunFollowed: wake('run-follower'),
    installationDispatchRate: config.installationDispatchRate,
    metrics,
    tracer,
    onExhausted: async (row, lastFailure, trx) => {
      await alerts.raise(exhaustedAlert(row, lastFailure), trx);
    },
    afterExhausted: wake('alerts'),
  });
  const runFollower = createRunFollower({
    store,
    clock,
    logger: logger.child({ component: 'run-follower' }),
    github,
    slots: dispatcher,
    workerId,
    leaseMs: config.leaseMs,
    requestTimeoutMs: config.dispatchTimeoutMs,
    scheduleMs: config.runFollowScheduleMs,
    installationRate: config.installationDispatchRate,
  });
  // A process that runs the workers routes, and its dispatcher takes the deliveries it has room
  // for as they are created (delivery/handoff.ts); an API-only process leaves both to the workers.
  const runsWorkers = runsPart(role, 'worker');
  const handoff = runsWorkers ? dispatcher : undefined;
  const router = createEventRouter({
    store,
    clock,
    logger: logger.child({ component: 'router' }),
    archiveRetentionMs: RETENTION_MS.archives,
    onDeliveriesCreated: () => notifier.notify('deliveries'),
    handoff,
    tracer,
  });
  const sweeper = createRetentionSweeper({
    store,
    clock,
    logger: logger.child({ component: 'retention' }),
    metrics,
  });
  const reconciler = createReconciler({
    store,
    clock,
    github,
    logger: logger.child({ component: 'reconciler' }),
    owner: workerId,
  });
  const notStarted = createNotStartedMonitor({
    store,
    clock,
    logger: logger.child({ component: 'not-started' }),
    afterMs: config.notStartedAfterMs,
    onFlagged: async (flagged, trx) => {
      for (const alert of notStartedAlerts(flagged)) await alerts.raise(alert, trx);
    },
    afterFlagged: wake('alerts'),
  });

  const setup = createAppSetup({
    store,
    clock,
    config,
    credentials: appCredentials,
    appInstallUrl: () => github.appInstallUrl(),
  });
  const http = await buildHttpApp({
    store,
    clock,
    logger,
    baseUrl: config.baseUrl,
    github,
    oauth: createCurrentAppOAuth({
      credentials: () => appCredentials.get(),
      webUrl: config.github.webUrl,
      apiUrl: config.github.apiUrl,
    }),
    appCredentials,
    setup,
    oidc: createOidcVerifier({ issuer: config.oidc.issuer, audience: config.oidc.audience }),
    secretBox: createSecretBox(config.secret),
    deliveryTokens,
    messageGraceMs: config.messageGraceMs,
    notStartedAfterMs: config.notStartedAfterMs,
    githubWebUrl: config.github.webUrl,
    wakeRouter: () => notifier.notify('events'),
    routeInline: runsWorkers,
    handoff,
    wakeDispatcher: () => notifier.notify('deliveries'),
    http: config.http,
    limits: config.limits,
    metrics,
    scrapeMetrics: () => metrics.scrape(),
    metricsToken: config.metrics.token,
    tracer,
    notReadyReason: options.notReadyReason ?? (() => null),
    serviceChecks: createServiceChecks(async () => ({
      configurationProblems: [],
      database: config.database,
      store,
      github: {
        apiUrl: config.github.apiUrl,
        credentials: await appCredentials.get(),
        setupUrl: setupUrlOf(config.baseUrl),
      },
      webhookUrl: `${config.baseUrl}/webhooks/github`,
      oidcIssuer: config.oidc.issuer,
      alertUrl: config.alerts.url,
    })),
    schemaChecks,
    alerts,
    metricsOnApiPort: config.metrics.onApiPort,
  });
  // Every process is scraped (and a worker-only one, which has no API, probed) on a port of its
  // own, private by default: the API's port is public.
  const probes = await buildProbeApp({
    store,
    clock,
    logger,
    scrapeMetrics: () => metrics.scrape(),
    metricsToken: config.metrics.token,
    limits: config.limits,
    http: config.http,
    notReadyReason: options.notReadyReason ?? (() => null),
    appCredentials,
  });
  let metricsUrl: string | null = null;

  // The background loops, by part. A loop sleeps until its next item is due, at most its poll
  // interval, unless something wakes it: a wake-up from the store (another process's work
  // included) or a part of this one, by name. The table's order is the order they start and stop.
  const recoveries = createRecoveryRunner({
    store,
    clock,
    wakeDispatcher: () => notifier.notify('deliveries'),
    tracer,
  });
  let lastSweep: number | null = null;
  let nextHealthCheck = clock.now();
  // The first pass waits one interval: a process that just started has nothing new to look at.
  let nextReconcile = clock.now() + config.reconcileIntervalMs;
  const table: Array<LoopSpec<LoopName>> = [
    {
      name: 'router',
      part: 'worker',
      work: () => router.routeDue(),
      nextDueAt: () => nextEventDueAt(store.db),
      pollIntervalMs: config.pollIntervalMs,
      wakeOn: 'events',
    },
    {
      name: 'run-follower',
      part: 'worker',
      work: () => runFollower.followDue(),
      nextDueAt: () => runFollower.nextDueAt(),
      pollIntervalMs: config.pollIntervalMs,
    },
    {
      name: 'dispatcher',
      part: 'worker',
      // A pass that started attempts is followed by another at once only if it may find more.
      work: async () => {
        const started = await dispatcher.fill();
        return dispatcher.mayClaimMore() ? started : 0;
      },
      nextDueAt: () => dispatcher.nextDueAt(),
      pollIntervalMs: config.pollIntervalMs,
      wakeOn: 'deliveries',
      onWakeUp: () => dispatcher.hint(),
      // Nothing starts an attempt any more (the router, the run follower and this loop stopped,
      // the API closed): the ones in flight are recorded before the rest stops.
      afterStop: () => dispatcher.idle(),
    },
    {
      name: 'retention',
      part: 'worker',
      work: async () => {
        lastSweep = clock.now();
        await sweeper.sweep();
        return 0;
      },
      nextDueAt: async () => (lastSweep ?? clock.now()) + config.retentionIntervalMs,
      pollIntervalMs: config.retentionIntervalMs,
    },
    {
      name: 'reconciler',
      part: 'worker',
      enabled: config.reconcileIntervalMs > 0,
      work: async () => {
        if (clock.now() < nextReconcile) return 0;
        nextReconcile = clock.now() + config.reconcileIntervalMs;
        await reconciler.reconcile();
        return 0;
      },
      nextDueAt: async () => nextReconcile,
      pollIntervalMs: config.reconcileIntervalMs,
    },
    {
      // Sleeps until the longest-waiting delivery becomes late; deliveries accepted meanwhile are
      // late later still, so waking up for them is never needed.
      name: 'not-started',
      part: 'worker',
      work: async () => (await notStarted.flag()).length,
      nextDueAt: () => notStarted.nextDueAt(),
      pollIntervalMs: Math.min(config.notStartedAfterMs, 60_000),
    },
    {
      name: 'alerts',
      part: 'worker',
      work: async () => {
        if (clock.now() >= nextHealthCheck) {
          nextHealthCheck = clock.now() + HEALTH_CHECK_INTERVAL_MS;
          await alerts.checkHealth();
        }
        return alerts.sendDue();
      },
      nextDueAt: async () => {
        const due = await alerts.nextDueAt();
        return due === null ? nextHealthCheck : Math.min(due, nextHealthCheck);
      },
      pollIntervalMs: config.pollIntervalMs,
    },
    {
      name: 'recoveries',
      part: 'worker',
      work: () => recoveries.runOnce(),
      nextDueAt: async () => null,
      pollIntervalMs: config.pollIntervalMs,
    },
  ];
  const background = createBackgroundLoops(table, { role, clock, logger, notifier });
  loops = background;
  return {
    store,
    http,
    router,
    dispatcher,
    sweeper,
    reconciler,
    notStarted,
    runFollower,
    alerts,
    metrics,
    appCredentials,
    setup,
    async start() {
      metricsUrl = await listenOn(probes, {
        host: config.metrics.host,
        port: config.metrics.port,
        setting: 'ZEKT_METRICS_PORT',
      });
      background.start();
      if (role === 'worker') {
        await http.ready();
        return metricsUrl;
      }
      return listenOn(http, { host: config.host, port: config.port, setting: 'PORT' });
    },
    get metricsUrl() {
      return metricsUrl;
    },
    async stop() {
      await probes.close();
      await http.close();
      await background.stop();
      await notifier.close();
      // Bounded: a tracing backend that hangs never holds up a stopping process.
      if (!options.tracer) await tracer.shutdown();
      await schemaChecks.close();
      stopCountingStoreErrors();
      if (!options.store) await store.close();
    },
  };
}
