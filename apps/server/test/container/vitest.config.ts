import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm run test:container` only (scripts/container-test.sh builds the images first): the suite
// drives podman, so it is kept out of the two projects `npm test` runs.
export default defineConfig({
  resolve: {
    alias: {
      'zekt-github-sim': fileURLToPath(
        new URL('../../../../packages/github-sim/src/index.ts', import.meta.url),
      ),
    },
  },
  test: {
    root: fileURLToPath(new URL('../../../..', import.meta.url)),
    include: ['apps/server/test/container/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
