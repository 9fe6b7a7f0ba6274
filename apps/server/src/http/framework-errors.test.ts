import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { refuseWhileClosing } from './framework-errors.js';
import { installProblemHandlers } from './problem.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(port: number, agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/ping', agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('refuseWhileClosing', () => {
  it('answers a request that arrives on an open connection during shutdown with a 503 problem, Retry-After and the connection closed', async () => {
    const app = Fastify({ return503OnClosing: false });
    installProblemHandlers(app);
    refuseWhileClosing(app);
    app.get('/ping', async () => ({ ok: true }));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let port = 0;
    // Runs after refuseWhileClosing's own preClose hook, before the server stops: the kept-alive
    // connection is still open, and the server is closing.
    let during: Answer | undefined;
    app.addHook('preClose', async () => {
      during = await get(port, agent);
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;

    const before = await get(port, agent);
    expect(before.status).toBe(200);
    await app.close();
    agent.destroy();
    if (!during) throw new Error('no request was made while closing');
    expect(during.status).toBe(503);
    expect(during.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(during.headers['retry-after']).toBe('1');
    expect(during.headers.connection).toBe('close');
    expect(JSON.parse(during.body)).toMatchObject({ code: 'server_unavailable' });
  });
});
