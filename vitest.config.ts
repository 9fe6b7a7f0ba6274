import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources in tests, so a test never runs
// against a stale build. End-to-end tests that start processes use the built `dist/`
// (`npm test` builds first).
//
// Two projects: `sqlite` runs every test on the embedded store; `postgres` runs the store contract
// suite and the server's integration and end-to-end suites again on PostgreSQL (each run creates
// and drops its own databases), plus the PostgreSQL-only suites in apps/server/test/postgres.
const storeSuites = [
  'apps/server/test/postgres/**/*.test.ts',
  'apps/server/src/store/store.test.ts',
  'apps/server/src/store/migrations/**/*.test.ts',
  'apps/server/src/retention/**/*.test.ts',
  'apps/server/test/**/*.test.ts',
  'bench/test/**/*.test.ts',
];
// The CLI's store-independent checks, the dev demo (always SQLite), the API docs (one writer of
// the committed OpenAPI snapshot), the console in Chromium (it reads the same API either way) and
// the npm package (it serves on SQLite). The container suite runs apart: `npm run test:container`.
const sqliteOnly = [
  'apps/server/test/cli.test.ts',
  'apps/server/test/package.test.ts',
  'apps/server/test/dev-demo.test.ts',
  'apps/server/test/api-docs.test.ts',
  'apps/server/test/console-*.test.ts',
];

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
          name: 'sqlite',
          include: [
            'apps/*/src/**/*.test.ts',
            'apps/*/test/**/*.test.ts',
            'packages/*/src/**/*.test.ts',
            'packages/*/test/**/*.test.ts',
            'bench/src/**/*.test.ts',
            'bench/test/**/*.test.ts',
          ],
          exclude: [
            'apps/server/test/postgres/**',
            'bench/test/postgres/**',
            'apps/server/test/container/**',
            '**/node_modules/**',
          ],
          env: { ZEKT_TEST_STORE: 'sqlite' },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: storeSuites,
          exclude: [...sqliteOnly, 'apps/server/test/container/**', '**/node_modules/**'],
          env: { ZEKT_TEST_STORE: 'postgres' },
        },
      },
    ],
  },
});
