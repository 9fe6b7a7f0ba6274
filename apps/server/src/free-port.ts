import { createServer } from 'node:net';

/**
 * A free TCP port on loopback: `zekt bench` and the tests must know the service's base URL (hook
 * URLs, OAuth callback) before the service listens.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port')),
      );
    });
  });
}
