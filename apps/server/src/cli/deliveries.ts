import { CliError } from './cli-error.js';
import { createZektClient, ok, ZektApiError, type ZektClient } from './zekt-client.js';

/**
 * `zekt deliveries list|show|replay`: the Delivery Status view and replay from a terminal, through
 * the same HTTP API the console uses (so it works against any Zekt, local or remote).
 */
export interface DeliveriesCommand {
  url: string;
  token: string;
  write: (text: string) => void;
}

/** The command's API client; its failures become `CliError`s through `asCliError`. */
export function clientOf(command: DeliveriesCommand): ZektClient {
  return createZektClient({ baseUrl: command.url, token: command.token });
}

/** Runs `call`, saying what went wrong as the CLI does: where Zekt was looked for, or what it answered. */
export async function asCliError<T>(command: DeliveriesCommand, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ZektApiError)) throw error;
    throw new CliError(
      error.code === 'network'
        ? `cannot reach Zekt at ${command.url}: ${error.message} (set --url, ZEKT_URL or ZEKT_BASE_URL)`
        : error.message,
    );
  }
}

export async function listDeliveries(
  command: DeliveriesCommand,
  filter: Record<'connection' | 'status' | 'since' | 'limit' | 'cursor', string | undefined>,
): Promise<void> {
  const query = Object.fromEntries(
    Object.entries(filter).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  const body = await asCliError(command, () =>
    ok(clientOf(command).GET('/api/v1/deliveries', { params: { query } })),
  );
  command.write(
    `${['DELIVERY', 'STATUS', 'RETRY', 'DISPATCHED', 'CONFIRMED', 'COMPLETED', 'CONSUMER', 'CONSUMER RUN'].join('\t')}\n`,
  );
  for (const d of body.deliveries) {
    const status =
      d.notStartedAt && d.deliveryStatus === 'Dispatched' ? 'Dispatched (not started)' : d.deliveryStatus;
    command.write(
      // The run GitHub created for a workflow_dispatch delivery; '-' for repository_dispatch.
      `${[d.deliveryId, status, d.retryNumber, d.dispatchedAt, d.confirmedAt ?? '-', d.completedAt ?? '-', d.consumer?.repository, d.consumerRun?.htmlUrl ?? '-'].join('\t')}\n`,
    );
  }
  if (body.nextCursor) command.write(`(more: --cursor ${String(body.nextCursor)})\n`);
}

export async function showDelivery(command: DeliveriesCommand, deliveryId: string): Promise<void> {
  const delivery = await asCliError(command, () =>
    ok(clientOf(command).GET('/api/v1/deliveries/{deliveryId}', { params: { path: { deliveryId } } })),
  );
  command.write(`${JSON.stringify(delivery, null, 2)}\n`);
}

export async function replay(command: DeliveriesCommand, deliveryId: string): Promise<void> {
  const body = await asCliError(command, () =>
    ok(clientOf(command).POST('/api/replay/{deliveryId}', { params: { path: { deliveryId } } })),
  );
  command.write(`replayed as ${String(body.deliveryId)} (replay of ${String(body.replayOf)})\n`);
}
