import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources in tests, so a test never runs
// against a stale build. End-to-end tests that start processes use the built `dist/`
// (`npm test` builds first).
export default defineConfig({
  resolve: {
    alias: {
      'zekt-github-sim': fileURLToPath(new URL('./packages/github-sim/src/index.ts', import.meta.url)),
    },
  },
  test: {
    include: [
      'apps/*/src/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
