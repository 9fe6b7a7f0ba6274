import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/**
 * The ceiling of `zekt bench --compare`: the least a webhook receiver can do — read the body,
 * verify its HMAC in constant time, answer 202 — on bare `node:http`. Nothing a real receiver can
 * skip is skipped, so no receiver on this machine and this Node answers faster.
 */
export function createCeilingServer(secret: string): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const valid = signedWith(secret, Buffer.concat(chunks), req.headers['x-hub-signature-256']);
      res.writeHead(valid ? 202 : 401, { 'content-type': 'application/json' });
      res.end(valid ? '{"outcome":"accepted"}' : '{"outcome":"unauthorized"}');
    });
  });
}

/** `X-Hub-Signature-256` is the HMAC-SHA256 of `body` under `secret`, compared in constant time. */
export function signedWith(secret: string, body: Buffer, header: string | string[] | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(String(header ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}
