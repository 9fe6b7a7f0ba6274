import { settingsHelp } from '../config/settings-doc.js';

/**
 * Every command's usage: what `zekt <command> --help` prints and what its argument parser accepts.
 * One table, so an option cannot be parsed without being documented, nor documented without being
 * parsed.
 */
export interface OptionUsage {
  name: string;
  type: 'string' | 'boolean';
  /** The placeholder shown after a string option (`--port <port>`). */
  value?: string;
  /** Parsed when the option is absent, and shown as the default. */
  default?: string;
  description: string;
}

export interface CommandUsage {
  /** The words that select it: `serve`, `token create`, `bench --compare`. */
  command: string;
  summary: string;
  synopsis: string[];
  details?: string;
  options: OptionUsage[];
  examples: string[];
  /** Also list the service's environment settings (`serve`). */
  settings?: boolean;
}

const apiTarget: OptionUsage[] = [
  {
    name: 'url',
    type: 'string',
    value: 'url',
    description: 'the Zekt API (default: ZEKT_URL, else ZEKT_BASE_URL, else http://localhost:PORT)',
  },
  { name: 'token', type: 'string', value: 'zkt_…', description: 'an API token (default: ZEKT_TOKEN)' },
];

export const COMMANDS: readonly CommandUsage[] = [
  {
    command: 'serve',
    summary: 'run the service (configuration from the environment)',
    synopsis: ['zekt serve [--role api|worker|all]'],
    details:
      'With DATABASE_URL set, run several `--role api` processes behind a load balancer and `--role worker` beside them. Every process serves /metrics, /healthz and /readyz on its private ZEKT_METRICS_PORT (127.0.0.1 unless ZEKT_METRICS_HOST says otherwise): processes sharing a machine need a port each.',
    options: [
      {
        name: 'role',
        type: 'string',
        value: 'role',
        default: 'all',
        description:
          'api: the HTTP API only; worker: the background workers only (probed on ZEKT_METRICS_PORT); all: both',
      },
    ],
    examples: ['zekt serve', 'DATABASE_URL=postgres://… zekt serve --role worker'],
    settings: true,
  },
  {
    command: 'dev',
    summary: 'the service, a GitHub simulator and a seeded demo, for trying Zekt',
    synopsis: ['zekt dev [--port <port>] [--sim-port <port>]'],
    details:
      'Keeps its store in ZEKT_DATA_DIR/dev (default ./.zekt/dev), emptied at every start; `npm start` runs it.',
    options: [
      { name: 'port', type: 'string', value: 'port', description: "Zekt's port (default: PORT, else 3000)" },
      {
        name: 'sim-port',
        type: 'string',
        value: 'port',
        default: '3001',
        description: "the GitHub simulator's port",
      },
    ],
    examples: ['zekt dev', 'zekt dev --port 4000 --sim-port 4001', 'PORT=4000 npm start'],
  },
  {
    command: 'demo-trigger',
    summary: 'run the demo provider workflow and show the dispatch arriving',
    synopsis: ['zekt demo-trigger [<payload-json>]'],
    details:
      'Needs a running `zekt dev` with the same ZEKT_DATA_DIR. The payload is the message the workflow sends (default {"version":"1.2.3"}).',
    options: [],
    examples: ['zekt demo-trigger', `npm run trigger -- '{"version":"1.2.3"}'`],
  },
  {
    command: 'setup',
    summary: 'print the setup URL that registers the GitHub App (setup mode)',
    synopsis: ['zekt setup'],
    details:
      'Prints the <ZEKT_BASE_URL>/setup?code=… URL `zekt serve` prints when no GitHub App is configured: the same one every time, from the store and ZEKT_SECRET (set both as for the server). Exits 1 when an App is configured already (setup is then closed).',
    options: [],
    examples: ['zekt setup', 'DATABASE_URL=postgres://… ZEKT_SECRET=… zekt setup'],
  },
  {
    command: 'migrate',
    summary: 'apply database migrations',
    synopsis: ['zekt migrate'],
    details: 'The store is DATABASE_URL, or the SQLite file in ZEKT_DATA_DIR. `zekt serve` migrates too.',
    options: [],
    examples: ['DATABASE_URL=postgres://… zekt migrate'],
  },
  {
    command: 'doctor',
    summary: 'check the configuration, database, GitHub App, clock, webhooks, OIDC and alert URL',
    synopsis: ['zekt doctor [--json]'],
    details:
      'Configuration from the environment, like `zekt serve`. Prints ✔ or ✘ per check with the fix under each ✘, and exits 1 when a check failed. It only reads: the store is neither created nor migrated, and the alert URL is probed with HEAD, never sent an alert (docs/operations.md, Doctor).',
    options: [{ name: 'json', type: 'boolean', description: 'print the checks as JSON' }],
    examples: ['zekt doctor', 'DATABASE_URL=postgres://… zekt doctor --json'],
  },
  {
    command: 'backup',
    summary: 'copy the embedded SQLite store to a file, while zekt serve runs',
    synopsis: ['zekt backup <file>'],
    details:
      'The store is the SQLite file in ZEKT_DATA_DIR (zekt.db); the copy is consistent as of one moment and never overwrites a file. To restore, stop the server and copy the backup to ZEKT_DATA_DIR/zekt.db. With DATABASE_URL (PostgreSQL), use pg_dump instead (docs/deploy.md, Backups).',
    options: [],
    examples: ['zekt backup backups/zekt-$(date +%F).db', 'ZEKT_DATA_DIR=/data zekt backup /backups/zekt.db'],
  },
  {
    command: 'reconcile',
    summary: 'ask GitHub to redeliver the webhooks it failed to deliver, and report',
    synopsis: ['zekt reconcile [--wait-s <seconds>] [--json]'],
    details:
      'Configuration from the environment, like `zekt serve`. Lists the recent deliveries of the App webhook and of every hook Zekt placed, asks for the failed ones again, and exits 1 when GitHub refused a webhook (docs/operations.md, Missed webhooks).',
    options: [
      {
        name: 'wait-s',
        type: 'string',
        value: 'seconds',
        default: '10',
        description: 'how long to wait for the redeliveries asked for to arrive (0: do not wait)',
      },
      { name: 'json', type: 'boolean', description: 'print the report as JSON' },
    ],
    examples: ['zekt reconcile', 'zekt reconcile --wait-s 0 --json'],
  },
  {
    command: 'token create',
    summary: 'create an API token (printed as the last line)',
    synopsis: ['zekt token create --login <user> [--account <account>] [--name <name>]'],
    details:
      'The store must exist (DATABASE_URL, or ZEKT_DATA_DIR of zekt serve) and know the login: the user logged in to the console once, or installed the App. The token never expires; people create expiring ones in the console (Settings › API tokens).',
    options: [
      {
        name: 'login',
        type: 'string',
        value: 'user',
        description: 'the GitHub login the token acts as (required)',
      },
      {
        name: 'account',
        type: 'string',
        value: 'account',
        description: 'also make the user a member of this account (it must have installed the App)',
      },
      { name: 'name', type: 'string', value: 'name', description: 'a label for the token' },
    ],
    examples: ['zekt token create --login octocat', 'zekt token create --login octocat --account acme'],
  },
  {
    command: 'deliveries',
    summary: 'delivery status and replay over the API',
    synopsis: [
      'zekt deliveries list [--connection <id>] [--status <status>] [--since <iso>] [--limit <n>] [--cursor <c>]',
      'zekt deliveries show <deliveryId>',
      'zekt deliveries replay <deliveryId>',
      'zekt deliveries recover --connection <id> --since <iso> [--states failed] [--dry-run]',
    ],
    options: [
      ...apiTarget,
      {
        name: 'connection',
        type: 'string',
        value: 'id',
        description: 'list: only this subscription; recover: the connection to recover',
      },
      { name: 'status', type: 'string', value: 'status', description: 'list: only this delivery status' },
      {
        name: 'since',
        type: 'string',
        value: 'iso',
        description: 'list, recover: dispatched at or after this time (recover: at most 90 days ago)',
      },
      {
        name: 'states',
        type: 'string',
        value: 'states',
        default: 'failed',
        description: 'recover: which deliveries to replay, comma-separated: failed, not_started',
      },
      {
        name: 'dry-run',
        type: 'boolean',
        description: 'recover: only print how many deliveries would be replayed',
      },
      { name: 'limit', type: 'string', value: 'n', description: 'list: at most this many' },
      {
        name: 'cursor',
        type: 'string',
        value: 'c',
        description: 'list: the next page, from the previous one',
      },
    ],
    examples: [
      'ZEKT_TOKEN=zkt_… zekt deliveries list --status Failed',
      'zekt deliveries replay dlv_… --token zkt_…',
      'zekt deliveries recover --connection sub_… --since 2026-11-20T00:00:00Z --dry-run',
    ],
  },
  {
    command: 'schema check',
    summary: "check a message file against a service's message schema, before pushing",
    synopsis: [
      'zekt schema check <service> <message.json> [--url <url>] [--token <zkt_…>]',
      'zekt schema check --schema <schema.json> <message.json>',
    ],
    details:
      'The service is its id (svc_…) or slug, read over the API (one of your services, or one the Directory shows you); --schema checks against a local file instead, offline. The check is the one Zekt runs when the message arrives (Ajv, JSON Schema 2020-12, RE2 patterns). Exits 0 when the message matches, 1 when it does not, 2 when the schema cannot be used.',
    options: [
      ...apiTarget,
      {
        name: 'schema',
        type: 'string',
        value: 'file',
        description: 'a local schema file instead of a service (no API call)',
      },
      {
        name: 'version',
        type: 'string',
        value: 'n',
        description: 'a version of the service’s schema (default: the one in force)',
      },
    ],
    examples: [
      'ZEKT_TOKEN=zkt_… zekt schema check acme-deploys message.json',
      'zekt schema check --schema contract.json message.json',
    ],
  },
  {
    command: 'bench',
    summary: 'load the whole path and check the speed targets',
    synopsis: ['zekt bench [options]', 'zekt bench --compare [options]   (see zekt bench --compare --help)'],
    details:
      'Runs a zekt serve process, the simulator and the durable demo, with provider runs started at --rate per second (0: back to back, --concurrency at a time); exits 1 when a target is missed (--report-only: only when an event was lost).',
    options: [
      { name: 'events', type: 'string', value: 'n', default: '1000', description: 'provider runs to start' },
      {
        name: 'rate',
        type: 'string',
        value: 'n',
        default: '20',
        description: 'runs started per second (0: back to back)',
      },
      {
        name: 'concurrency',
        type: 'string',
        value: 'n',
        default: '100',
        description: 'runs in flight at a time when --rate is 0',
      },
      {
        name: 'payload-bytes',
        type: 'string',
        value: 'n',
        default: '1024',
        description: 'size of each message',
      },
      {
        name: 'database-url',
        type: 'string',
        value: 'postgres://…',
        description: 'a throwaway PostgreSQL database (the bench writes its demo there); default: SQLite',
      },
      {
        name: 'timeout-s',
        type: 'string',
        value: 's',
        default: '300',
        description: 'give up after this long',
      },
      {
        name: 'schema',
        type: 'string',
        value: 'mode',
        default: 'none',
        description:
          'none, or give the demo service a message schema the messages match, enforced as off, warn or enforce (docs/performance.md)',
      },
      {
        name: 'profile',
        type: 'string',
        value: 'dir',
        description: 'write a CPU profile of the zekt serve process here (node --cpu-prof)',
      },
      { name: 'json', type: 'boolean', description: 'print the report as JSON' },
      { name: 'report-only', type: 'boolean', description: 'exit 1 only when an event was lost' },
    ],
    examples: [
      'zekt bench',
      'zekt bench --rate 0 --events 3000 --schema enforce',
      'zekt bench --events 5000 --rate 0 --database-url postgres://localhost/zekt_bench',
    ],
  },
  {
    command: 'bench --compare',
    summary: 'Zekt beside a bare HMAC + 202 ceiling and a naive Octokit router, under the same load',
    synopsis: ['zekt bench --compare [options]'],
    details:
      'Zekt non-durable and durable (SQLite, and PostgreSQL with --database-url, also 1 vs 2 workers), the tenant-isolation scenario and queries over --records delivery records; prints ratios and exits 1 when a target is missed.',
    options: [
      { name: 'compare', type: 'boolean', description: 'this comparison instead of the plain bench' },
      {
        name: 'events',
        type: 'string',
        value: 'n',
        default: '3000',
        description: "webhooks of each target's closed-loop run, per round",
      },
      {
        name: 'rounds',
        type: 'string',
        value: 'n',
        default: '3',
        description: 'measure the targets in turn this many times over and report the medians',
      },
      {
        name: 'warm-up',
        type: 'string',
        value: 'n',
        default: '3000',
        description: 'webhooks sent to a target before each round measures it (0: none)',
      },
      { name: 'connections', type: 'string', value: 'n', default: '32', description: 'client connections' },
      {
        name: 'rates',
        type: 'string',
        value: 'list',
        default: '100,250,500,750,1000',
        description: 'offered rates per second',
      },
      {
        name: 'records',
        type: 'string',
        value: 'n',
        default: '1000000',
        description: 'delivery records to query over (0: skip)',
      },
      {
        name: 'database-url',
        type: 'string',
        value: 'postgres://…',
        description: 'also run on this throwaway PostgreSQL database (emptied; created when missing)',
      },
      {
        name: 'chart',
        type: 'string',
        value: 'file.svg',
        description: 'write an SVG chart of the latencies',
      },
      {
        name: 'only',
        type: 'string',
        value: 'list',
        description:
          'run only these parts: ceiling, naive, bare-durable, nondurable, durable, ingestion, postgres, isolation, backlog, scale-out, queries',
      },
      {
        name: 'profile',
        type: 'string',
        value: 'dir',
        description: "write a CPU profile of each Zekt target's zekt serve here (node --cpu-prof)",
      },
      { name: 'json', type: 'boolean', description: 'print the report as JSON' },
    ],
    examples: [
      'zekt bench --compare --chart docs/bench.svg',
      'zekt bench --compare --only queries --database-url postgres://localhost/zekt_bench',
    ],
  },
];

export function usageOf(command: string): CommandUsage {
  const usage = COMMANDS.find((c) => c.command === command);
  if (!usage) throw new Error(`no usage for ${command}`);
  return usage;
}

/** What `zekt --help` prints: one line per command. */
export function formatOverview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.command.length));
  return [
    'zekt — event router for GitHub Actions',
    '',
    'Usage: zekt <command> [options]      (from a clone: npx zekt …)',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.command.padEnd(width)}  ${c.summary}`),
    '',
    'zekt <command> --help prints a command’s options, defaults and examples.',
    '',
  ].join('\n');
}

/** What `zekt <command> --help` prints. */
export function formatUsage(usage: CommandUsage): string {
  const flags = usage.options.map(
    (o) => `--${o.name}${o.type === 'string' ? ` <${o.value ?? 'value'}>` : ''}`,
  );
  const width = Math.max(0, ...flags.map((f) => f.length));
  const lines = [
    `zekt ${usage.command} — ${usage.summary}`,
    '',
    'Usage:',
    ...usage.synopsis.map((s) => `  ${s}`),
  ];
  if (usage.details) lines.push('', usage.details);
  if (usage.options.length > 0) {
    lines.push('', 'Options:');
    usage.options.forEach((o, i) => {
      const fallback = o.default === undefined ? '' : ` (default: ${o.default})`;
      lines.push(`  ${flags[i]!.padEnd(width)}  ${o.description}${fallback}`);
    });
  }
  if (usage.settings) {
    lines.push('', 'Environment:', ...settingsHelp());
  }
  lines.push('', 'Examples:', ...usage.examples.map((e) => `  ${e}`), '');
  return lines.join('\n');
}

/** The `node:util` parseArgs options of a command, from its usage. */
export function parseOptionsOf(
  usage: CommandUsage,
): Record<string, { type: 'string' | 'boolean'; default?: string | boolean }> {
  return Object.fromEntries(
    usage.options.map((o) => [
      o.name,
      o.type === 'boolean'
        ? { type: 'boolean' as const, default: false }
        : { type: 'string' as const, ...(o.default === undefined ? {} : { default: o.default }) },
    ]),
  );
}
