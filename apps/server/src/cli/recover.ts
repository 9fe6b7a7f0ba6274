import { randomUUID } from 'node:crypto';
import { CliError } from './cli-error.js';
import { asCliError, clientOf, type DeliveriesCommand } from './deliveries.js';
import { ok } from './zekt-client.js';

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

export async function recover(command: DeliveriesCommand, options: RecoverOptions): Promise<void> {
  if (!options.connection || !options.since) {
    throw new CliError(
      'recover needs --connection <id> and --since <iso time>, e.g. --since 2026-11-20T00:00:00Z',
    );
  }
  const states = (options.states ?? 'failed').split(',').filter((s) => s !== '');
  const client = clientOf(command);
  const { connection: id, since } = options;
  if (options.dryRun) {
    const preview = await asCliError(command, () =>
      ok(
        client.GET('/api/v1/connections/{id}/recoveries/preview', {
          params: { path: { id }, query: { since, states: states.join(',') } },
        }),
      ),
    );
    command.write(
      `${preview.toReplay} deliveries would be replayed (${preview.total} ${states.join('/')} since ${options.since}, ${preview.total - preview.toReplay} replayed already)\n`,
    );
    return;
  }
  // One key for this invocation: a request retried after a lost answer returns the same recovery.
  let recovery = await asCliError(command, () =>
    ok(
      client.POST('/api/v1/connections/{id}/recoveries', {
        params: { path: { id } },
        body: { since, states },
        headers: { 'idempotency-key': `cli-${randomUUID()}` },
      }),
    ),
  );
  command.write(`recovery ${recovery.id} started: ${recovery.total} deliveries to look at\n`);
  let last = '';
  for (;;) {
    const line = `${recovery.status}: replayed ${recovery.replayed}, skipped ${recovery.skipped} of ${recovery.total}\n`;
    if (line !== last) command.write(line);
    last = line;
    if (recovery.status !== 'running') return;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1000));
    const recoveryId = recovery.id;
    recovery = await asCliError(command, () =>
      ok(
        client.GET('/api/v1/connections/{id}/recoveries/{recoveryId}', {
          params: { path: { id, recoveryId } },
        }),
      ),
    );
  }
}
