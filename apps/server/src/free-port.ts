import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A free TCP port on loopback: `zekt bench` and the tests must know the service's base URL (hook
 * URLs, OAuth callback) before the service listens.
 *
 * The port is chosen below the kernel's ephemeral range when it can be. A port from that range
 * (what listening on port 0 hands out) is also what every outgoing connection on the machine takes
 * as its local port: between the choice and the service's `listen`, a client socket of another
 * test could take it, and the service failed with "PORT … is in use". Below the range only
 * another listener can take a port, and the probe sees those.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralRangeStart();
  if (below !== null && below - LOWEST_CHOSEN > 1_000) {
    for (let tries = 0; tries < 20; tries++) {
      const port = LOWEST_CHOSEN + Math.floor(Math.random() * (below - LOWEST_CHOSEN));
      if (await listens(port)) return port;
    }
  }
  return listens(0);
}

/** The lowest port chosen: above the well-known ports most local services take. */
const LOWEST_CHOSEN = 10_000;

/** The first port of Linux's ephemeral range; null elsewhere. */
export function ephemeralRangeStart(): number | null {
  try {
    const start = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(start) && start > 0 ? start : null;
  } catch {
    return null;
  }
}

/** Listens on `port` of loopback and closes at once: the port it got, or 0 when it was taken. */
function listens(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      port !== 0 && (error.code === 'EADDRINUSE' || error.code === 'EACCES') ? resolve(0) : reject(error),
    );
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port')),
      );
    });
  });
}
