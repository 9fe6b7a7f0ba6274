#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, type Environment, loadConfig, loadStoreConfig, processEnvironment } from '../config.js';
import { redactUrl } from '../redact-url.js';
import { explainDatabaseFailure } from '../startup/database-problems.js';
import { OperatorError } from '../startup/operator-error.js';
import { isStoreUnavailable } from '../store/store-errors.js';
import type { Role } from '../zekt.js';
import { BENCH_MISSING, type BenchWorkspace, loadBenchWorkspace } from './bench-workspace.js';
import { CliError } from './cli-error.js';
import {
  COMMANDS,
  type CommandUsage,
  formatOverview,
  formatUsage,
  parseOptionsOf,
  usageOf,
} from './usage.js';

// Each command imports what it runs when it runs: `--help` and a usage error answer without loading
// the service, and `zekt serve` never loads the GitHub simulator that `dev` and `bench` start.

/** A command's parsed arguments, read through its usage table. */
interface Parsed {
  string(name: string): string | undefined;
  flag(name: string): boolean;
  positionals: string[];
}

/** Parses a command's arguments; anything its usage does not list is a usage error (exit 2). */
function parseCommand(usage: CommandUsage, args: string[], maxPositionals = 0): Parsed {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: parseOptionsOf(usage), allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (!code?.startsWith('ERR_PARSE_ARGS')) throw error;
    const option = /'(-[^' ]+)/.exec((error as Error).message)?.[1];
    throw usageError(
      usage,
      code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? `unknown option ${option}`
        : code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
          ? `${option ?? 'an option'} needs a value`
          : ((error as Error).message.split('. ')[0] ?? 'bad arguments'),
    );
  }
  if (parsed.positionals.length > maxPositionals)
    throw usageError(usage, `unexpected argument ${parsed.positionals[maxPositionals]}`);
  return {
    string: (name) => parsed.values[name] as string | undefined,
    flag: (name) => parsed.values[name] === true,
    positionals: parsed.positionals,
  };
}

function usageError(usage: CommandUsage, problem: string): CliError {
  return new CliError(`zekt ${usage.command}: ${problem}\n\n${formatUsage(usage)}`);
}

/** The usage `--help` shows for the words given, or null when they name no command. */
function helpFor(command: string, rest: string[]): string | null {
  if (command === 'bench')
    return rest.includes('--compare')
      ? formatUsage(usageOf('bench --compare'))
      : `${formatUsage(usageOf('bench'))}\n${formatUsage(usageOf('bench --compare'))}`;
  if (command === 'token') return formatUsage(usageOf('token create'));
  if (command === 'schema') return formatUsage(usageOf('schema check'));
  const usage = COMMANDS.find((c) => c.command === command);
  return usage ? formatUsage(usage) : null;
}

/** The bench workspace, or the one-line way to get it (exit 2) where this is the installed package. */
async function benchWorkspace(): Promise<BenchWorkspace> {
  const bench = await loadBenchWorkspace();
  if (!bench) throw new CliError(BENCH_MISSING);
  return bench;
}

async function runCompareCommand(args: string[]): Promise<number> {
  const values = parseCommand(usageOf('bench --compare'), args);
  const rates = (values.string('rates') ?? '')
    .split(',')
    .map((rate) => positiveInteger('--rates', rate.trim(), 100_000));
  const records = values.string('records');
  const warmUp = values.string('warm-up');
  const { runCompare, COMPARE_PARTS, formatCompareReport } = await benchWorkspace();
  const onlyValue = values.string('only');
  const only = onlyValue?.split(',').map((part) => part.trim());
  const unknownPart = only?.find((part) => !COMPARE_PARTS.includes(part));
  if (unknownPart !== undefined)
    throw usageError(
      usageOf('bench --compare'),
      `--only takes ${COMPARE_PARTS.join(', ')} (got ${unknownPart})`,
    );
  const report = await runCompare({
    events: positiveInteger('--events', values.string('events'), 1_000_000),
    rounds: positiveInteger('--rounds', values.string('rounds'), 20),
    warmUp: warmUp === '0' ? 0 : positiveInteger('--warm-up', warmUp, 1_000_000),
    connections: positiveInteger('--connections', values.string('connections'), 1_000),
    rates,
    records: records === '0' ? 0 : positiveInteger('--records', records, 100_000_000),
    databaseUrl: values.string('database-url'),
    chartPath: values.string('chart') ?? null,
    only,
    profileDir: values.string('profile'),
    progress: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(
    values.flag('json') ? `${JSON.stringify(report, null, 2)}\n` : formatCompareReport(report),
  );
  return report.verdicts.every((v) => v.met) ? 0 : 1;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h') {
    process.stdout.write(formatOverview());
    return command ? 0 : 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    const help = helpFor(command, rest);
    if (help === null) throw unknownCommand(command);
    process.stdout.write(help);
    return 0;
  }
  const env = processEnvironment();
  switch (command) {
    case 'serve': {
      const usage = usageOf('serve');
      const role = parseCommand(usage, rest).string('role') as Role;
      if (!['api', 'worker', 'all'].includes(role))
        throw usageError(usage, `--role must be api, worker or all (got ${role})`);
      const { runServe } = await import('../startup/serve.js');
      await runServe({
        config: loadConfig(env),
        role,
        untilStopped: untilSignal,
        write: (line) => process.stderr.write(line),
      });
      return 0;
    }
    case 'doctor': {
      const values = parseCommand(usageOf('doctor'), rest);
      const { runDoctor } = await import('./doctor.js');
      return runDoctor({ env, json: values.flag('json'), write: (text) => process.stdout.write(text) });
    }
    case 'dev': {
      const values = parseCommand(usageOf('dev'), rest);
      const { runDev } = await import('./dev.js');
      const port = values.string('port');
      await runDev({
        env,
        // --port over PORT, as the usage says; `PORT=4000 npm start` is the other way in.
        port: port === undefined ? portNumber('PORT', env.PORT ?? '3000') : portNumber('--port', port),
        simPort: portNumber('--sim-port', values.string('sim-port')),
        untilStopped: untilSignal,
      });
      return 0;
    }
    case 'bench': {
      if (rest.includes('--compare')) return runCompareCommand(rest);
      const values = parseCommand(usageOf('bench'), rest);
      const rate = values.string('rate');
      const { runBench, formatBenchReport } = await benchWorkspace();
      const report = await runBench({
        events: positiveInteger('--events', values.string('events'), 1_000_000),
        rate: rate === '0' ? 0 : positiveInteger('--rate', rate, 10_000),
        concurrency: positiveInteger('--concurrency', values.string('concurrency'), 1_000),
        payloadBytes: positiveInteger('--payload-bytes', values.string('payload-bytes'), 512 * 1024),
        databaseUrl: values.string('database-url'),
        timeoutMs: positiveInteger('--timeout-s', values.string('timeout-s'), 86_400) * 1000,
        schema: benchSchemaMode(values.string('schema')),
        profileDir: values.string('profile'),
        progress: (line) => process.stderr.write(`${line}\n`),
      });
      process.stdout.write(
        values.flag('json') ? `${JSON.stringify(report, null, 2)}\n` : formatBenchReport(report),
      );
      if (report.lost > 0) return 1;
      return values.flag('report-only') || report.targets.every((t) => t.met) ? 0 : 1;
    }
    case 'demo-trigger': {
      const values = parseCommand(usageOf('demo-trigger'), rest, 1);
      const { runDemoTrigger } = await import('./demo-trigger.js');
      return runDemoTrigger({ env, payload: values.positionals[0] });
    }
    case 'reconcile': {
      const values = parseCommand(usageOf('reconcile'), rest);
      const waitS = values.string('wait-s');
      const { runReconcile } = await import('./reconcile.js');
      return runReconcile({
        config: loadConfig(env),
        waitForRecoveryMs: (waitS === '0' ? 0 : positiveInteger('--wait-s', waitS, 600)) * 1000,
        json: values.flag('json'),
        write: (text) => process.stdout.write(text),
      });
    }
    case 'setup': {
      parseCommand(usageOf('setup'), rest);
      const { runSetup } = await import('./setup.js');
      return runSetup({
        config: loadConfig(env),
        write: (text) => process.stdout.write(text),
        warn: (text) => process.stderr.write(text),
      });
    }
    case 'migrate': {
      parseCommand(usageOf('migrate'), rest);
      const { openStore } = await import('../store/store.js');
      const database = loadStoreConfig(env);
      const store = await openStore(database);
      const applied = await store.migrate();
      await store.close();
      process.stdout.write(
        applied.length > 0 ? `applied: ${applied.join(', ')}\n` : 'the database is up to date\n',
      );
      return 0;
    }
    case 'backup': {
      const usage = usageOf('backup');
      const values = parseCommand(usage, rest, 1);
      const file = values.positionals[0];
      if (!file) throw usageError(usage, 'which file? zekt backup <file>');
      const { backupStore } = await import('./backup.js');
      const backup = await backupStore(loadStoreConfig(env), file);
      process.stdout.write(`backed up the store to ${backup.file} (${backup.pages} pages)\n`);
      return 0;
    }
    case 'token': {
      const usage = usageOf('token create');
      const [sub, ...args] = rest;
      if (sub !== 'create') throw usageError(usage, sub ? `unknown subcommand ${sub}` : 'which subcommand?');
      const values = parseCommand(usage, args);
      const login = values.string('login');
      if (!login) throw usageError(usage, '--login <user> is required: the GitHub login the token acts as');
      const { openExistingStore } = await import('../startup/existing-store.js');
      const { createTokenForLogin } = await import('./token.js');
      // Never a new store: a token in a store no server reads would be a token for nothing.
      const store = await openExistingStore(loadStoreConfig(env), { migrated: true });
      try {
        const created = await createTokenForLogin(store, {
          login,
          account: values.string('account'),
          name: values.string('name'),
          unknownLogin: 'refuse',
          consoleUrl: env.ZEKT_BASE_URL ?? null,
        });
        process.stdout.write(
          `token for ${created.login}${created.account ? ` (member of ${created.account})` : ''}; store it now, it is not shown again:\n${created.token}\n`,
        );
      } finally {
        await store.close();
      }
      return 0;
    }
    case 'schema': {
      const usage = usageOf('schema check');
      const [sub, ...args] = rest;
      if (sub !== 'check') throw usageError(usage, sub ? `unknown subcommand ${sub}` : 'which subcommand?');
      const values = parseCommand(usage, args, 2);
      const schemaFile = values.string('schema') ?? null;
      const positionals = values.positionals;
      if (schemaFile === null ? positionals.length !== 2 : positionals.length !== 1)
        throw usageError(
          usage,
          schemaFile === null ? 'give <service> <message.json>' : 'give <message.json> after --schema <file>',
        );
      const { checkMessageFile } = await import('./schema-check.js');
      return checkMessageFile({
        service: schemaFile === null ? positionals[0]! : null,
        schemaFile,
        version: values.string('version'),
        messageFile: positionals.at(-1)!,
        api: {
          url: values.string('url') ?? env.ZEKT_URL ?? 'http://localhost:3000',
          token: values.string('token') ?? env.ZEKT_TOKEN,
        },
        write: (text) => process.stdout.write(text),
      });
    }
    case 'deliveries': {
      const usage = usageOf('deliveries');
      const [sub, ...args] = rest;
      if (sub !== 'list' && sub !== 'show' && sub !== 'replay' && sub !== 'recover')
        throw usageError(usage, sub ? `unknown subcommand ${sub}` : 'which subcommand?');
      const values = parseCommand(usage, args, sub === 'list' || sub === 'recover' ? 0 : 1);
      const id = values.positionals[0];
      if ((sub === 'show' || sub === 'replay') && !id) throw usageError(usage, `${sub} needs a <deliveryId>`);
      const token = values.string('token') ?? env.ZEKT_TOKEN;
      if (!token)
        throw new CliError('an API token is needed: --token zkt_… or ZEKT_TOKEN (zekt token create)');
      const target = {
        url: values.string('url') ?? apiUrlOf(env),
        token,
        write: (t: string) => process.stdout.write(t),
      };
      if (sub === 'recover') {
        const { recover } = await import('./recover.js');
        await recover(target, {
          connection: values.string('connection'),
          since: values.string('since'),
          states: values.string('states'),
          dryRun: values.flag('dry-run'),
        });
        return 0;
      }
      const { listDeliveries, replay, showDelivery } = await import('./deliveries.js');
      if (sub === 'list') {
        await listDeliveries(target, {
          connection: values.string('connection'),
          status: values.string('status'),
          since: values.string('since'),
          limit: values.string('limit'),
          cursor: values.string('cursor'),
        });
        return 0;
      }
      await (sub === 'show' ? showDelivery(target, id!) : replay(target, id!));
      return 0;
    }
    default:
      throw unknownCommand(command);
  }
}

function unknownCommand(command: string): CliError {
  return new CliError(`zekt: unknown command ${command}\n\n${formatOverview()}`);
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
    const database = storeSettings(processEnvironment());
    const explained =
      error instanceof OperatorError ? error : database && explainDatabaseFailure(error, database);
    if (explained) {
      process.stderr.write(`zekt: ${explained.message}\n`);
      process.exit(2);
    }
    if (isStoreUnavailable(error)) {
      const url = processEnvironment().DATABASE_URL;
      process.stderr.write(
        `zekt: cannot reach the database ${url ? `at ${redactUrl(url)} (DATABASE_URL)` : 'file (ZEKT_DATA_DIR)'}: ${(error as Error).message}\n`,
      );
      process.exit(2);
    }
    const missing = missingDevelopmentModule(error);
    if (missing) {
      process.stderr.write(`${missing}\n`);
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

/** The store settings, when they are valid, to explain a database failure with. */
function storeSettings(env: Environment) {
  try {
    return loadStoreConfig(env);
  } catch {
    return null;
  }
}

/**
 * Where `zekt deliveries` finds the API: ZEKT_URL (the API as this machine reaches it), else the
 * service's public ZEKT_BASE_URL, else a local `zekt serve` on PORT.
 */
function apiUrlOf(env: Environment): string {
  return (
    env.ZEKT_URL?.trim() || env.ZEKT_BASE_URL?.trim() || `http://localhost:${env.PORT?.trim() || '3000'}`
  );
}

/**
 * The zekt package installs what `zekt serve` needs. `zekt dev` and `zekt bench` also run the GitHub
 * simulator, an optional peer of the package, and `bench --compare` GitHub's webhook examples, a
 * development dependency of the repository: when one is missing, say how to get it.
 */
function missingDevelopmentModule(error: unknown): string | null {
  const code = (error as { code?: string } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return null;
  const message = (error as Error).message;
  if (message.includes("'zekt-github-sim'")) {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      peerDependencies?: Record<string, string>;
    };
    const range = manifest.peerDependencies?.['zekt-github-sim'] ?? 'latest';
    return `zekt: this command runs the GitHub simulator, which the zekt package does not install: npm install "zekt-github-sim@${range}" beside it, or run it from a clone of the repository (npm ci && npm start)`;
  }
  if (message.includes("'@octokit/webhooks-examples'"))
    return 'zekt bench --compare runs from a clone of the repository, with its development dependencies (npm ci)';
  return null;
}

function positiveInteger(flag: string, raw: string | undefined, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new CliError(`${flag} must be a whole number from 1 to ${max} (got ${raw})`);
  return value;
}

function benchSchemaMode(raw: string | undefined): 'none' | 'off' | 'warn' | 'enforce' {
  const mode = raw ?? 'none';
  if (mode === 'none' || mode === 'off' || mode === 'warn' || mode === 'enforce') return mode;
  throw new CliError(`--schema must be none, off, warn or enforce (got ${mode})`);
}

function portNumber(name: string, raw: string | undefined): number {
  return positiveInteger(name, raw, 65_535);
}
