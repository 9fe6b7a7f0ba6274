import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources in tests, so a test never runs
// against a stale build. End-to-end tests that start processes use the built `dist/`
// (`npm test` builds first).
//
// Four projects, by level (CONTRIBUTING.md says what goes where):
// - `unit`: the tests beside the code (`src/**/*.test.ts`), on SQLite where they need a store;
// - `integration`: the suites of `test/` that run the service in the test's own process (the
//   harness: Fastify's `inject()` or loopback HTTP) on a real SQLite file;
// - `postgres`: the suites whose result depends on the store, again on PostgreSQL (each run creates
//   and drops its own databases), and the PostgreSQL-only suites of apps/server/test/postgres;
// - `e2e`: the suites that start the built server or simulator as processes, or drive Chromium.
// The container suite runs apart: `npm run test:container`.

/** Tests beside the code that start processes or read the build: end to end. */
const e2eInSrc = ['packages/github-sim/src/cli.test.ts'];

/** Suites of `test/` that start built processes (`dist/`) or Chromium. */
const e2eSuites = [
  'apps/server/test/e2e.test.ts',
  'apps/server/test/e2e-durable.test.ts',
  'apps/server/test/crash-*.test.ts',
  'apps/server/test/console-alerts.test.ts',
  'apps/server/test/console-journey.test.ts',
  'apps/server/test/console-not-started.test.ts',
  'apps/server/test/console-recovery-audit.test.ts',
  'apps/server/test/console-schemas.test.ts',
  'apps/server/test/console-settings.test.ts',
  'apps/server/test/console-setup.test.ts',
  'apps/server/test/console-states.test.ts',
  'apps/server/test/console-tour.test.ts',
  'apps/server/test/console-workflow-dispatch.test.ts',
  'apps/server/test/alerts.test.ts',
  'apps/server/test/backup.test.ts',
  'bench/test/bench.test.ts',
  'bench/test/compare.test.ts',
  'bench/test/stopped-bench.test.ts',
  'bench/test/server-wrapper.test.ts',
  'apps/server/test/cli.test.ts',
  'apps/server/test/dev-demo.test.ts',
  'apps/server/test/doctor.test.ts',
  'apps/server/test/metrics.test.ts',
  'apps/server/test/package.test.ts',
  'apps/server/test/reconcile-cli.test.ts',
  'apps/server/test/recovery-concurrency.test.ts',
  'apps/server/test/setup-processes.test.ts',
  'apps/server/test/startup-checks.test.ts',
  'apps/server/test/workflow-dispatch.test.ts',
  'apps/server/test/hardening/probe-port-timeouts.test.ts',
  'packages/action/test/action-metadata.test.ts',
];

/**
 * Suites whose result depends on the store: what they assert rests on its transactions, locks,
 * leases, unique keys, types or queries, so they run on both. A suite about what HTTP carries
 * (bodies, headers, redirects, problem+json, tenancy of routes, logs) answers the same on either and
 * runs on SQLite only.
 */
const storeSuites = [
  // The store itself: its contract, migrations, schema snapshots, compiled queries, retention.
  'apps/server/src/store/store.test.ts',
  'apps/server/src/store/migrations/**/*.test.ts',
  'apps/server/src/retention/**/*.test.ts',
  'apps/server/test/compiled-query.test.ts',
  'apps/server/test/schema-dump.test.ts',
  'apps/server/test/consumer-run-match.test.ts',
  // Delivery: durable delivery, the pipeline, retries, leases, hand-off, wake-ups, pacing, recovery.
  'apps/server/test/durable-delivery.test.ts',
  'apps/server/test/pipeline.test.ts',
  'apps/server/test/retries.test.ts',
  'apps/server/test/recovery.test.ts',
  'apps/server/test/recovery-concurrency.test.ts',
  'apps/server/test/dispatch-handoff.test.ts',
  'apps/server/test/dispatch-wakeups.test.ts',
  'apps/server/test/pacing.test.ts',
  'apps/server/test/run-following.test.ts',
  'apps/server/test/tenant-isolation.test.ts',
  'apps/server/test/not-started.test.ts',
  'apps/server/test/alerts.test.ts',
  'apps/server/test/workflow-dispatch.test.ts',
  // Ingestion's idempotency and the reconciler (unique keys on deliveries and receipts).
  'apps/server/test/webhook-ingestion.test.ts',
  'apps/server/test/reconcile.test.ts',
  'apps/server/test/reconcile-cli.test.ts',
  'apps/server/test/hardening/one-event-two-hooks.test.ts',
  // Counters, caps, cursors, idempotency keys and per-repository serialisation kept in the store.
  'apps/server/test/hardening/rate-limits.test.ts',
  'apps/server/test/hardening/account-caps.test.ts',
  'apps/server/test/hardening/forged-cursors.test.ts',
  'apps/server/test/hardening/replay-policy.test.ts',
  'apps/server/test/hardening/hook-placement.test.ts',
  'apps/server/test/event-contracts.test.ts',
  // Killed processes restarted on the same store.
  'apps/server/test/crash-*.test.ts',
  'apps/server/test/e2e-durable.test.ts',
  // Processes and commands that open the store they are given.
  'apps/server/test/backup.test.ts',
  'bench/test/bench.test.ts',
  'apps/server/test/doctor.test.ts',
  'apps/server/test/metrics.test.ts',
  'apps/server/test/setup-processes.test.ts',
  'apps/server/test/startup-checks.test.ts',
  // PostgreSQL only: run lock, scale-out, query plans, database loss, …
  'apps/server/test/postgres/**/*.test.ts',
  'bench/test/postgres/**/*.test.ts',
];

const always = ['apps/server/test/container/**', '**/node_modules/**'];

// Parallelism: the suites wait on sockets, processes and the database far more than they compute,
// so each level runs more files at once than there are cores; the levels run one after the other
// (`sequence.groupOrder`), so a burst of Chromium or process start-ups never starves the others.
// The vitest command line's --maxWorkers overrides these.
// `isolate: false` (unit, integration, postgres): the files one worker runs share their modules;
// importing the service again for each file cost more than the tests (CONTRIBUTING.md says what a
// test must leave behind for that).
// Three at a time keeps two cores busy without starving the timing-sensitive suites (a WAL
// checkpointer keeping up, a server answering before the next chunk arrives).
const workers = {
  unit: 3,
  integration: 3,
  postgres: 3,
  e2e: 2,
};

export default defineConfig({
  resolve: {
    alias: [
      {
        find: 'zekt-github-sim',
        replacement: fileURLToPath(new URL('./packages/github-sim/src/index.ts', import.meta.url)),
      },
      // The bench reads the server through its build; its tests read the sources.
      {
        find: /^@zekt\/server\/dist\/(.*)$/,
        replacement: fileURLToPath(new URL('./apps/server/src/$1', import.meta.url)),
      },
    ],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          isolate: false,
          include: ['apps/*/src/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'bench/src/**/*.test.ts'],
          exclude: [...e2eInSrc, ...always],
          env: { ZEKT_TEST_STORE: 'sqlite' },
          maxWorkers: workers.unit,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          isolate: false,
          include: ['apps/*/test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: ['apps/server/test/postgres/**', ...e2eSuites, ...always],
          env: { ZEKT_TEST_STORE: 'sqlite' },
          maxWorkers: workers.integration,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          isolate: false,
          include: storeSuites,
          exclude: always,
          env: { ZEKT_TEST_STORE: 'postgres' },
          maxWorkers: workers.postgres,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: [...e2eInSrc, ...e2eSuites],
          exclude: always,
          env: { ZEKT_TEST_STORE: 'sqlite' },
          maxWorkers: workers.e2e,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
