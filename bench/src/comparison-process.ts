import { type BareDurableRouterOptions, createBareDurableRouter } from './bare-durable-router.js';
import { createCeilingServer } from './ceiling-server.js';
import { createNaiveRouter, type NaiveRouterOptions } from './naive-router.js';

/**
 * Entry point of the comparison targets `zekt bench --compare` runs as processes of their own,
 * so each is measured like Zekt is: `node comparison-process.js ceiling|naive|bare-durable <settings JSON>`
 * (a throwaway simulator's key and secrets). It prints `listening <port>` once it listens.
 */
const [kind, json] = process.argv.slice(2);
const settings = JSON.parse(json ?? '{}') as { port: number } & Record<string, unknown>;
const server =
  kind === 'ceiling'
    ? createCeilingServer(String(settings.secret))
    : kind === 'bare-durable'
      ? createBareDurableRouter(settings as unknown as BareDurableRouterOptions)
      : createNaiveRouter(settings as unknown as NaiveRouterOptions);
server.keepAliveTimeout = 60_000;
server.listen(settings.port, '127.0.0.1', () => process.stdout.write(`listening ${settings.port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
