#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { formatBenchReport } from '../bench/bench-report.js';
import { formatCompareReport } from '../bench/compare-report.js';
import { runBench } from '../bench/run-bench.js';
import { runCompare } from '../bench/run-compare.js';
import { ConfigError, loadConfig, loadStoreConfig, processEnvironment, SETTINGS } from '../config.js';
import { openStore } from '../store/store.js';
import { isStoreUnavailable } from '../store/store-errors.js';
import { createZekt, type Role } from '../zekt.js';
import { CliError } from './cli-error.js';
import { listDeliveries, replay, showDelivery } from './deliveries.js';
import { runDemoTrigger } from './demo-trigger.js';
import { runDev } from './dev.js';
import { createTokenForLogin } from './token.js';

const USAGE = `zekt — event router for GitHub Actions

Usage:
  zekt serve [--role api|worker|all]   run the service (configuration from the environment)
  zekt dev [--port 3000] [--sim-port 3001]
                                       service + GitHub simulator + a seeded demo, for trying Zekt
  zekt demo-trigger [payload-json]     run the demo provider workflow and show the dispatch arriving
  zekt migrate                         apply database migrations
  zekt token create --login <user> [--account <account>] [--name <name>]
                                       create an API token (printed as the last line)
  zekt deliveries list [--connection <id>] [--status <s>] [--since <iso>] [--limit <n>] [--cursor <c>]
  zekt deliveries show <deliveryId>
  zekt deliveries replay <deliveryId>
                                       delivery status and replay over the API
                                       (--url or ZEKT_URL, default http://localhost:3000;
                                        --token or ZEKT_TOKEN: an API token)
  zekt bench [--events 1000] [--rate 20] [--concurrency 100] [--payload-bytes 1024]
             [--database-url postgres://…] [--timeout-s 300] [--json] [--report-only]
                                       load the whole path (a zekt serve process, the simulator, the
                                       durable demo) with provider runs started at --rate per second
                                       (0: back to back, --concurrency at a time) and check the
                                       targets; exit 1 when one is missed (--report-only: only when
                                       an event was lost). --database-url must be a throwaway
                                       database: the bench writes its demo there
  zekt bench --compare [--events 3000] [--connections 32] [--rates 100,250,500,750,1000]
             [--records 1000000] [--database-url postgres://…] [--chart file.svg] [--json]
                                       side by side under the same load: the bare node:http
                                       HMAC + 202 ceiling, a naive Octokit router, Zekt non-durable
                                       and durable (SQLite, and PostgreSQL with --database-url,
                                       also 1 vs 2 workers), the tenant-isolation scenario and
                                       queries over --records delivery records; prints ratios and
                                       exits 1 when a target of issue 11 is missed
  zekt <command> --help                this text

Environment (zekt serve):
${SETTINGS.map((s) => `  ${s.name.padEnd(32)} ${s.description}`).join('\n')}
`;

async function runCompareCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      compare: { type: 'boolean' },
      events: { type: 'string', default: '3000' },
      connections: { type: 'string', default: '32' },
      rates: { type: 'string', default: '100,250,500,750,1000' },
      records: { type: 'string', default: '1000000' },
      'database-url': { type: 'string' },
      chart: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const rates = (values.rates ?? '')
    .split(',')
    .map((rate) => positiveInteger('--rates', rate.trim(), 100_000));
  const report = await runCompare({
    events: positiveInteger('--events', values.events, 1_000_000),
    connections: positiveInteger('--connections', values.connections, 1_000),
    rates,
    records: values.records === '0' ? 0 : positiveInteger('--records', values.records, 100_000_000),
    databaseUrl: values['database-url'],
    chartPath: values.chart ?? null,
    progress: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatCompareReport(report));
  return report.verdicts.every((v) => v.met) ? 0 : 1;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || rest.includes('--help')) {
    process.stdout.write(USAGE);
    return command ? 0 : 1;
  }
  const env = processEnvironment();
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({ args: rest, options: { role: { type: 'string', default: 'all' } } });
      const role = values.role as Role;
      if (!['api', 'worker', 'all'].includes(role))
        throw new CliError(`--role must be api, worker or all (got ${role})`);
      const zekt = await createZekt({ config: loadConfig(env), role });
      const url = await zekt.start();
      process.stderr.write(`zekt ${role} ${url ? `listening on ${url}` : 'running'}\n`);
      await untilSignal();
      await zekt.stop();
      return 0;
    }
    case 'dev': {
      const { values } = parseArgs({
        args: rest,
        options: {
          port: { type: 'string', default: '3000' },
          'sim-port': { type: 'string', default: '3001' },
        },
      });
      await runDev({
        env,
        port: Number(values.port),
        simPort: Number(values['sim-port']),
        untilStopped: untilSignal,
      });
      return 0;
    }
    case 'bench': {
      if (rest.includes('--compare')) return runCompareCommand(rest);
      const { values } = parseArgs({
        args: rest,
        options: {
          events: { type: 'string', default: '1000' },
          rate: { type: 'string', default: '20' },
          concurrency: { type: 'string', default: '100' },
          'payload-bytes': { type: 'string', default: '1024' },
          'database-url': { type: 'string' },
          'timeout-s': { type: 'string', default: '300' },
          json: { type: 'boolean', default: false },
          'report-only': { type: 'boolean', default: false },
        },
      });
      const report = await runBench({
        events: positiveInteger('--events', values.events, 1_000_000),
        rate: values.rate === '0' ? 0 : positiveInteger('--rate', values.rate, 10_000),
        concurrency: positiveInteger('--concurrency', values.concurrency, 1_000),
        payloadBytes: positiveInteger('--payload-bytes', values['payload-bytes'], 512 * 1024),
        databaseUrl: values['database-url'],
        timeoutMs: positiveInteger('--timeout-s', values['timeout-s'], 86_400) * 1000,
        progress: (line) => process.stderr.write(`${line}\n`),
      });
      process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatBenchReport(report));
      if (report.lost > 0) return 1;
      return values['report-only'] || report.targets.every((t) => t.met) ? 0 : 1;
    }
    case 'demo-trigger':
      return runDemoTrigger({ env, payload: rest[0] });
    case 'migrate': {
      const database = loadStoreConfig(env);
      const store = await openStore(database);
      const applied = await store.migrate();
      await store.close();
      process.stdout.write(
        applied.length > 0 ? `applied: ${applied.join(', ')}\n` : 'the database is up to date\n',
      );
      return 0;
    }
    case 'token': {
      const [sub, ...args] = rest;
      if (sub !== 'create')
        throw new CliError('usage: zekt token create --login <user> [--account <account>]');
      const { values } = parseArgs({
        args,
        options: { login: { type: 'string' }, account: { type: 'string' }, name: { type: 'string' } },
      });
      if (!values.login) throw new CliError('--login <user> is required: the GitHub login the token acts as');
      const database = loadStoreConfig(env);
      const store = await openStore(database);
      try {
        // A token may be the first thing an operator creates, before the server ever ran.
        await store.migrate();
        const created = await createTokenForLogin(store, {
          login: values.login,
          account: values.account,
          name: values.name,
        });
        process.stdout.write(
          `token for ${created.login}${created.account ? ` (member of ${created.account})` : ''}; store it now, it is not shown again:\n${created.token}\n`,
        );
      } finally {
        await store.close();
      }
      return 0;
    }
    case 'deliveries': {
      const [sub, ...args] = rest;
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          url: { type: 'string' },
          token: { type: 'string' },
          connection: { type: 'string' },
          status: { type: 'string' },
          since: { type: 'string' },
          limit: { type: 'string' },
          cursor: { type: 'string' },
        },
      });
      const token = values.token ?? env.ZEKT_TOKEN;
      if (!token)
        throw new CliError('an API token is needed: --token zkt_… or ZEKT_TOKEN (zekt token create)');
      const target = {
        url: values.url ?? env.ZEKT_URL ?? 'http://localhost:3000',
        token,
        write: (t: string) => process.stdout.write(t),
      };
      if (sub === 'list') {
        await listDeliveries(target, {
          connection: values.connection,
          status: values.status,
          since: values.since,
          limit: values.limit,
          cursor: values.cursor,
        });
        return 0;
      }
      const id = positionals[0];
      if ((sub === 'show' || sub === 'replay') && id) {
        await (sub === 'show' ? showDelivery(target, id) : replay(target, id));
        return 0;
      }
      throw new CliError('usage: zekt deliveries list | show <deliveryId> | replay <deliveryId>');
    }
    default:
      throw new CliError(`unknown command ${command}; see zekt --help`);
  }
}

/** A database URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured URL';
  }
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (isStoreUnavailable(error)) {
      const url = processEnvironment().DATABASE_URL;
      process.stderr.write(
        `zekt: cannot reach the database ${url ? `at ${redactUrl(url)} (DATABASE_URL)` : 'file (ZEKT_DATA_DIR)'}: ${(error as Error).message}\n`,
      );
      process.exit(2);
    }
    if (error instanceof ConfigError || error instanceof CliError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`zekt: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);

function positiveInteger(flag: string, raw: string | undefined, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new CliError(`${flag} must be a whole number from 1 to ${max} (got ${raw})`);
  return value;
}
