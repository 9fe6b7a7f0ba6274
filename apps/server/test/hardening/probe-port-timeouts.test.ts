import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/harness.js';
import { type ProcessStack, prepareProcessStack } from '../support/process-stack.js';
import { ProcessGroup } from '../support/processes.js';
import { RawConnection } from '../support/raw-http.js';

/**
 * The metrics port (a worker's only port, and every other process's private one) has the API's
 * request timeouts. It had none: a hundred sockets that sent half a request's headers stayed open
 * for 95 s, as many as the client cared to open. Here the request timeout is short (configured),
 * and every such socket must be closed by the server — the test waits for that, not for a time.
 */
const SLOW_SOCKETS = 20;
const processes = new ProcessGroup();
let stack: ProcessStack;
let workerUrl: string;
let apiMetricsUrl: string;

beforeAll(async () => {
  stack = await prepareProcessStack(processes, {
    name: 'probe-timeouts',
    env: { ZEKT_REQUEST_TIMEOUT_MS: '500' },
  });
  ({ url: workerUrl } = await processes.startProbedWorker(stack.zektEnv));
  ({ metricsUrl: apiMetricsUrl } = await processes.startZektWithMetrics(stack.zektUrl, stack.zektEnv, [
    '--role',
    'api',
  ]));
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe('the metrics port', () => {
  it('closes connections whose headers do not arrive within the request timeout', {
    timeout: 60_000,
  }, async () => {
    for (const url of [workerUrl, apiMetricsUrl]) {
      const slow = await Promise.all(Array.from({ length: SLOW_SOCKETS }, () => RawConnection.open(url)));
      for (const connection of slow) {
        // A request line and one header, then nothing: the headers never end.
        connection.write(`GET /healthz HTTP/1.1\r\nHost: ${new URL(url).host}\r\n`);
      }
      try {
        await eventually(() => (slow.every((c) => c.closed) ? true : undefined), 30_000);
      } finally {
        for (const connection of slow) connection.close();
      }
      // Whoever sends a whole request is still answered.
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
    }
  });
});
