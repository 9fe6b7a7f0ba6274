import { connect, type Socket } from 'node:net';

/**
 * HTTP/1.1 over a bare socket, for requests `fetch` cannot make: a body sent slowly or never, a
 * declared length that does not come, a request line that is not HTTP.
 */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export class RawConnection {
  private buffer = Buffer.alloc(0);
  private ended = false;
  private readonly waiters = new Set<() => void>();

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.notify();
    });
    const end = () => {
      this.ended = true;
      this.notify();
    };
    socket.on('end', end);
    socket.on('close', end);
    socket.on('error', end);
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) }, () =>
        resolve(new RawConnection(socket)),
      );
      socket.once('error', reject);
    });
  }

  write(data: string | Buffer): boolean {
    if (this.socket.destroyed || !this.socket.writable) return false;
    this.socket.write(data);
    return true;
  }

  /** Whether a complete response (headers and the body its Content-Length announces) has arrived. */
  get answered(): boolean {
    return this.parse() !== undefined;
  }

  get closed(): boolean {
    return this.ended;
  }

  /** The response, once it has fully arrived (or the connection closed after one). */
  async response(): Promise<RawResponse> {
    for (;;) {
      const parsed = this.parse();
      if (parsed) return parsed;
      if (this.ended) throw new Error(`the connection closed without a response: ${this.buffer.toString()}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          resolve();
        };
        this.waiters.add(wake);
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private notify() {
    for (const wake of [...this.waiters]) wake();
  }

  private parse(): RawResponse | undefined {
    const text = this.buffer.toString('latin1');
    const headEnd = text.indexOf('\r\n\r\n');
    if (headEnd === -1) return undefined;
    const [statusLine = '', ...lines] = text.slice(0, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 'NaN');
    const body = this.buffer.subarray(headEnd + 4);
    if (Number.isNaN(length) ? !this.ended : body.length < length) return undefined;
    return {
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: body.subarray(0, Number.isNaN(length) ? body.length : length).toString('utf8'),
    };
  }
}

/** The head of a request, CRLF-terminated. */
export function requestHead(method: string, path: string, headers: Record<string, string | number>): string {
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}
