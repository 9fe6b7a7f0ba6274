import { CliError } from './cli-error.js';

/**
 * `zekt deliveries list|show|replay`: the Delivery Status view and replay from a terminal, through
 * the same HTTP API the console uses (so it works against any Zekt, local or remote).
 */
export interface DeliveriesCommand {
  url: string;
  token: string;
  write: (text: string) => void;
}

async function call(
  command: DeliveriesCommand,
  method: string,
  path: string,
): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(command.url.replace(/\/$/, '') + path, {
      method,
      headers: { authorization: `Bearer ${command.token}` },
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
  return body;
}

export async function listDeliveries(
  command: DeliveriesCommand,
  filter: Record<'connection' | 'status' | 'since' | 'limit' | 'cursor', string | undefined>,
): Promise<void> {
  const query = new URLSearchParams(
    Object.entries(filter).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  const body = await call(command, 'GET', `/api/v1/deliveries${query.size > 0 ? `?${query}` : ''}`);
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer printed field by field.
  const deliveries = body.deliveries as Array<Record<string, any>>;
  command.write(
    `${['DELIVERY', 'STATUS', 'RETRY', 'DISPATCHED', 'CONFIRMED', 'COMPLETED', 'CONSUMER', 'CONSUMER RUN'].join('\t')}\n`,
  );
  for (const d of deliveries) {
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
  command.write(
    `${JSON.stringify(await call(command, 'GET', `/api/v1/deliveries/${encodeURIComponent(deliveryId)}`), null, 2)}\n`,
  );
}

export async function replay(command: DeliveriesCommand, deliveryId: string): Promise<void> {
  const body = await call(command, 'POST', `/api/replay/${encodeURIComponent(deliveryId)}`);
  command.write(`replayed as ${String(body.deliveryId)} (replay of ${String(body.replayOf)})\n`);
}
