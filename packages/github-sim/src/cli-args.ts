import { parseArgs } from 'node:util';
import type { WorkflowConclusion } from './types.js';

export const USAGE = `zekt-github-sim — a local stand-in for the parts of GitHub a GitHub App backend uses

Usage:
  zekt-github-sim [serve] [options]          start the simulator (serve is the default)
  zekt-github-sim run <owner/repo> [options] run a scripted workflow on a running simulator
  zekt-github-sim --help

serve options:
  --port <n>                  port to listen on (default 3001; 0 picks a free port)
  --host <address>            address to bind (default 127.0.0.1)
  --app-id <n>                the App's id (default 1001)
  --app-slug <slug>           the App's slug (default zekt-dev)
  --private-key-path <file>   the App's private key, PEM (PKCS#8 or PKCS#1); generated when absent
  --webhook-url <url>         where App-level webhooks (installation events, ...) are sent
  --webhook-secret <secret>   the App's webhook secret; generated when absent
  --app-events <a,b>          App-level event subscriptions, e.g. workflow_run
  --callback-url <url>        a user authorization callback URL for the OAuth web flow (repeatable)
  --allow-private-hook-urls   accept repository hooks on localhost/private addresses (like GHES)
  --oidc-token-lifetime <s>   lifetime of Actions OIDC tokens in seconds (default 300)
  --ghes-version <x.y>        answer as GitHub Enterprise Server x.y (3.20 and older refuse
                              return_run_details on workflow_dispatch); default: github.com

  Prints one JSON line { url, apiUrl, oidcIssuer, app } on stdout (app includes the private key
  and webhook secret), then runs until SIGINT/SIGTERM.

run options:
  --sim-url <url>             base URL of the running simulator (required)
  --workflow <file>           workflow file name, e.g. deploy.yml (required)
  --name <name>               workflow display name (default: file name, capitalised)
  --conclusion <c>            success | failure | cancelled | timed_out | skipped | neutral | action_required
  --actor <login>             who triggered the run (default: the repository owner)
  --branch <name>             head branch (default main)
  --sha <sha>                 head commit (default: random)
  --zekt-url <url>            send a message to <url>/api/events/receive first, as the zekt action does
  --event-type <type>         the message's event type (with --zekt-url)
  --payload <json>            the message's JSON payload (with --zekt-url; default {})
  --audience <aud>            OIDC audience of the message's token (default api://zekt)

  Prints the run result (run, env, message, webhooks) as JSON.
`;

export interface ServeCommand {
  command: 'serve';
  host: string;
  port: number;
  appId: number | undefined;
  appSlug: string | undefined;
  privateKeyPath: string | undefined;
  webhookUrl: string | undefined;
  webhookSecret: string | undefined;
  appEvents: string[] | undefined;
  callbackUrls: string[] | undefined;
  allowPrivateHookUrls: boolean;
  oidcTokenLifetimeSeconds: number | undefined;
  ghesVersion: string | undefined;
}

export interface RunCommand {
  command: 'run';
  simUrl: string;
  repository: string;
  body: {
    workflow: string;
    name?: string;
    conclusion?: WorkflowConclusion;
    actor?: string;
    headBranch?: string;
    headSha?: string;
    message?: { zektUrl: string; eventType: string; payload: unknown; audience?: string };
  };
}

export type CliCommand = ServeCommand | RunCommand | { command: 'help' };

/** A command line that cannot be run; the message says what to fix. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}

function integer(value: string | undefined, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new CliUsageError(`${flag} must be an integer ≥ ${min}; got ${value}`);
  return Number(value);
}

function parseServe(args: string[]): ServeCommand {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'app-id': { type: 'string' },
      'app-slug': { type: 'string' },
      'private-key-path': { type: 'string' },
      'webhook-url': { type: 'string' },
      'webhook-secret': { type: 'string' },
      'app-events': { type: 'string' },
      'callback-url': { type: 'string', multiple: true },
      'allow-private-hook-urls': { type: 'boolean' },
      'oidc-token-lifetime': { type: 'string' },
      'ghes-version': { type: 'string' },
    },
  });
  const ghesVersion = values['ghes-version'];
  if (ghesVersion !== undefined && !/^\d+\.\d+$/.test(ghesVersion)) {
    throw new CliUsageError(`--ghes-version must be major.minor, e.g. 3.20; got ${ghesVersion}`);
  }
  if (positionals.length > 0)
    throw new CliUsageError(`serve takes no arguments; got ${positionals.join(' ')}`);
  return {
    command: 'serve',
    host: values.host ?? '127.0.0.1',
    port: integer(values.port, '--port', 0) ?? 3001,
    appId: integer(values['app-id'], '--app-id', 1),
    appSlug: values['app-slug'],
    privateKeyPath: values['private-key-path'],
    webhookUrl: values['webhook-url'],
    webhookSecret: values['webhook-secret'],
    appEvents: values['app-events']
      ?.split(',')
      .map((event) => event.trim())
      .filter((event) => event !== ''),
    callbackUrls: values['callback-url'],
    allowPrivateHookUrls: values['allow-private-hook-urls'] ?? false,
    oidcTokenLifetimeSeconds: integer(values['oidc-token-lifetime'], '--oidc-token-lifetime', 1),
    ghesVersion,
  };
}

function parseRun(args: string[]): RunCommand {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'sim-url': { type: 'string' },
      workflow: { type: 'string' },
      name: { type: 'string' },
      conclusion: { type: 'string' },
      actor: { type: 'string' },
      branch: { type: 'string' },
      sha: { type: 'string' },
      'zekt-url': { type: 'string' },
      'event-type': { type: 'string' },
      payload: { type: 'string' },
      audience: { type: 'string' },
    },
  });
  const [repository, ...extra] = positionals;
  if (repository === undefined || !/^[^/\s]+\/[^/\s]+$/.test(repository) || extra.length > 0) {
    throw new CliUsageError('run needs exactly one <owner/repo> argument');
  }
  const simUrl = values['sim-url'];
  if (simUrl === undefined)
    throw new CliUsageError('run needs --sim-url <url> (printed by zekt-github-sim serve)');
  if (values.workflow === undefined)
    throw new CliUsageError('run needs --workflow <file>, e.g. --workflow deploy.yml');
  const body: RunCommand['body'] = { workflow: values.workflow };
  if (values.name !== undefined) body.name = values.name;
  if (values.conclusion !== undefined) body.conclusion = values.conclusion as WorkflowConclusion;
  if (values.actor !== undefined) body.actor = values.actor;
  if (values.branch !== undefined) body.headBranch = values.branch;
  if (values.sha !== undefined) body.headSha = values.sha;
  const zektUrl = values['zekt-url'];
  if (zektUrl === undefined) {
    if (values['event-type'] !== undefined || values.payload !== undefined) {
      throw new CliUsageError('--event-type and --payload need --zekt-url <url>');
    }
  } else {
    const eventType = values['event-type'];
    if (eventType === undefined) throw new CliUsageError('--zekt-url needs --event-type <type>');
    let payload: unknown = {};
    if (values.payload !== undefined) {
      try {
        payload = JSON.parse(values.payload);
      } catch {
        throw new CliUsageError(`--payload must be JSON; got ${values.payload}`);
      }
    }
    body.message = { zektUrl, eventType, payload };
    if (values.audience !== undefined) body.message.audience = values.audience;
  }
  return { command: 'run', simUrl: simUrl.replace(/\/+$/, ''), repository, body };
}

/**
 * Parses the command line (without `node` and the script path).
 *
 * @example parseCli(['serve', '--port', '0']) // { command: 'serve', port: 0, ... }
 */
export function parseCli(argv: string[]): CliCommand {
  if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') return { command: 'help' };
  try {
    if (argv[0] === 'run') return parseRun(argv.slice(1));
    if (argv[0] === 'serve') return parseServe(argv.slice(1));
    return parseServe(argv);
  } catch (error) {
    if (error instanceof CliUsageError) throw error;
    throw new CliUsageError((error as Error).message);
  }
}
