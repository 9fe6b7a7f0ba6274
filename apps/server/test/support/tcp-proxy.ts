import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP forwarder standing between a process and its database, so a test can take the database
 * away (connections cut, new ones refused) and give it back, without stopping the shared server.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/**
 * With several targets, connections are spread over them in turn: a minimal load balancer.
 */
export async function createTcpProxy(
  target: { host: string; port: number } | Array<{ host: string; port: number }>,
): Promise<TcpProxy> {
  const targets = Array.isArray(target) ? target : [target];
  let next = 0;
  const sockets = new Set<Socket>();
  let server: Server;
  let port = 0;

  function open(): Promise<void> {
    server = createServer((client) => {
      const to = targets[next++ % targets.length]!;
      const upstream = connect(to.port, to.host);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        port = typeof address === 'object' && address ? address.port : port;
        resolve();
      });
    });
  }

  async function shut(): Promise<void> {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  await open();
  return {
    get port() {
      return port;
    },
    cut: shut,
    restore: open,
    close: async () => {
      if (server.listening) await shut();
    },
  };
}
