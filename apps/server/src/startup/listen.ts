import type { FastifyInstance } from 'fastify';
import { OperatorError } from './operator-error.js';

/**
 * Listens on `host:port`; a port another process holds, one the user may not bind or an address
 * the machine does not have becomes an `OperatorError` naming the setting (`PORT`,
 * `ZEKT_METRICS_PORT`, `HOST`) instead of Node's stack trace.
 */
export async function listenOn(
  server: Pick<FastifyInstance, 'listen'>,
  address: { host: string; port: number; setting: 'PORT' | 'ZEKT_METRICS_PORT' },
): Promise<string> {
  try {
    return await server.listen({ host: address.host, port: address.port });
  } catch (error) {
    throw explainListenFailure(error, address) ?? error;
  }
}

export function explainListenFailure(
  error: unknown,
  { host, port, setting }: { host: string; port: number; setting: string },
): OperatorError | null {
  const code = (error as { code?: unknown } | null)?.code;
  const free = `set ${setting} to a free port (${setting}=0 picks any free one)`;
  if (code === 'EADDRINUSE') {
    const why =
      setting === 'ZEKT_METRICS_PORT'
        ? 'each zekt process on a host needs its own metrics port'
        : 'is another zekt, or another server, running?';
    return new OperatorError(
      `${setting} ${port} is in use on ${host}: ${why}`,
      `stop the process that holds it, or ${free}`,
      { cause: error },
    );
  }
  if (code === 'EACCES') {
    return new OperatorError(
      `${setting} ${port} may not be opened by this user on ${host} (ports below 1024 need privileges)`,
      `${free}, and put a reverse proxy on the privileged port`,
      { cause: error },
    );
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new OperatorError(
      `HOST ${host} is not an address of this machine`,
      'set HOST to one of its addresses, or 0.0.0.0 for all of them',
      { cause: error },
    );
  }
  return null;
}
