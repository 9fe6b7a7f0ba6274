import { randomUUID } from 'node:crypto';
import { CliError } from './cli-error.js';
import type { DeliveriesCommand } from './deliveries.js';

/**
 * `zekt deliveries recover`: starts a bulk recovery of a connection through the API (or, with
 * --dry-run, only says how many deliveries it would replay) and prints its progress until it ends.
 */
export interface RecoverOptions {
  connection: string | undefined;
  since: string | undefined;
  states: string | undefined;
  dryRun: boolean;
  /** How often progress is read (tests make it short). */
  pollMs?: number;
}

interface Recovery {
  id: string;
  status: 'running' | 'completed' | 'cancelled';
  total: number;
  replayed: number;
  skipped: number;
}

export async function recover(command: DeliveriesCommand, options: RecoverOptions): Promise<void> {
  if (!options.connection || !options.since) {
    throw new CliError(
      'recover needs --connection <id> and --since <iso time>, e.g. --since 2026-11-20T00:00:00Z',
    );
  }
  const states = (options.states ?? 'failed').split(',').filter((s) => s !== '');
  const base = `/api/v1/connections/${encodeURIComponent(options.connection)}/recoveries`;
  if (options.dryRun) {
    const query = new URLSearchParams({ since: options.since, states: states.join(',') });
    const preview = await call<{ total: number; toReplay: number }>(
      command,
      'GET',
      `${base}/preview?${query}`,
    );
    command.write(
      `${preview.toReplay} deliveries would be replayed (${preview.total} ${states.join('/')} since ${options.since}, ${preview.total - preview.toReplay} replayed already)\n`,
    );
    return;
  }
  // One key for this invocation: a request retried after a lost answer returns the same recovery.
  let recovery = await call<Recovery>(command, 'POST', base, {
    body: { since: options.since, states },
    headers: { 'idempotency-key': `cli-${randomUUID()}` },
  });
  command.write(`recovery ${recovery.id} started: ${recovery.total} deliveries to look at\n`);
  let last = '';
  for (;;) {
    const line = `${recovery.status}: replayed ${recovery.replayed}, skipped ${recovery.skipped} of ${recovery.total}\n`;
    if (line !== last) command.write(line);
    last = line;
    if (recovery.status !== 'running') return;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1000));
    recovery = await call<Recovery>(command, 'GET', `${base}/${encodeURIComponent(recovery.id)}`);
  }
}

async function call<T>(
  command: DeliveriesCommand,
  method: string,
  path: string,
  request: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(command.url.replace(/\/$/, '') + path, {
      method,
      headers: {
        authorization: `Bearer ${command.token}`,
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...request.headers,
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    });
  } catch (error) {
    throw new CliError(
      `cannot reach Zekt at ${command.url}: ${(error as Error).message} (set --url, ZEKT_URL or ZEKT_BASE_URL)`,
    );
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) {
    throw new CliError(
      `${method} ${path} answered ${response.status}: ${String(body.detail ?? response.statusText)}`,
    );
  }
  return body as T;
}
