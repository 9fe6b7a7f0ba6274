import { defineConfig } from 'vite';

/**
 * The console is built into dist/: index.html plus hashed files under dist/console/, which the
 * server serves at /console/ (apps/server/src/http/routes/console.ts) under a strict CSP: nothing
 * inline, scripts and styles only from Zekt itself. `npm run dev -w @zekt/console` serves it with
 * hot reload and sends API calls to a Zekt on 127.0.0.1:3000 (`npm start`).
 *
 * No React plugin: esbuild compiles JSX (automatic runtime); fast refresh is not worth Babel.
 */
const zekt = process.env.ZEKT_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    assetsDir: 'console',
    emptyOutDir: true,
    target: 'es2022',
    // Browsers the console supports all preload modules natively.
    modulePreload: { polyfill: false },
    rollupOptions: {
      // TanStack Query marks its modules "use client" for server-component bundlers; a plain SPA
      // has no such boundary, so the directive is rightly dropped.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE' && warning.message.includes('"use client"')) return;
        warn(warning);
      },
    },
  },
  server: {
    proxy: Object.fromEntries(['/api', '/auth'].map((path) => [path, { target: zekt, changeOrigin: false }])),
  },
});
