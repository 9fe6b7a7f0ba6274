import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The simulator's HTTP server, built through Fastify's `serverFactory` so that the simulator can
 * stop accepting connections and start again on the same port (`suspend` / `resume`): to a client
 * the host is then unreachable (connection refused), as when GitHub cannot be reached at all.
 * Requests in flight when it suspends finish; their connections close afterwards, so no kept-alive
 * connection lets a client slip through while suspended.
 */
export class Listener {
  private server: Server | undefined;
  /** Open connections and how many requests each is answering. */
  private readonly sockets = new Map<Socket, number>();
  private readonly responses = new Set<ServerResponse>();
  private suspendedFlag = false;
  private address: { host: string; port: number } | undefined;

  /** Pass as Fastify's `serverFactory`. */
  readonly factory = (handler: Handler): Server => {
    const server = createServer((request, response) => this.handle(handler, request, response));
    // Fastify's own defaults for the servers it creates (keep-alive 72 s, no request timeout): a
    // `hang` fault must hang until the client gives up, not until Node's 5-minute request timeout.
    server.keepAliveTimeout = 72_000;
    server.requestTimeout = 0;
    server.on('connection', (socket: Socket) => {
      this.sockets.set(socket, 0);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server = server;
    return server;
  };

  get suspended(): boolean {
    return this.suspendedFlag;
  }

  /** Records where the server listens, for `resume`. */
  listening(host: string, port: number): void {
    this.address = { host, port };
  }

  suspend(): void {
    if (this.suspendedFlag || this.server === undefined) return;
    this.suspendedFlag = true;
    this.server.close();
    for (const [socket, active] of this.sockets) {
      if (active === 0) socket.destroy();
    }
    // Answers still to come say `Connection: close`, so clients do not reuse their connections.
    for (const response of this.responses) {
      if (!response.headersSent) response.shouldKeepAlive = false;
    }
  }

  async resume(): Promise<void> {
    const server = this.server;
    const address = this.address;
    if (!this.suspendedFlag || server === undefined || address === undefined) return;
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => {
        server.off('listening', onListening);
        reject(error);
      };
      const onListening = () => {
        server.off('error', onError);
        resolve();
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen({ host: address.host, port: address.port });
    });
    this.suspendedFlag = false;
  }

  private handle(handler: Handler, request: IncomingMessage, response: ServerResponse): void {
    const socket = request.socket;
    if (this.suspendedFlag) {
      // A kept-alive connection opened before the suspension: drop it as a down host would.
      socket.destroy();
      return;
    }
    this.sockets.set(socket, (this.sockets.get(socket) ?? 0) + 1);
    this.responses.add(response);
    response.once('close', () => {
      this.responses.delete(response);
      const active = (this.sockets.get(socket) ?? 1) - 1;
      if (this.sockets.has(socket)) this.sockets.set(socket, active);
      if (this.suspendedFlag && active === 0) socket.end();
    });
    handler(request, response);
  }
}
