import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ephemeralRangeStart, freePort } from './free-port.js';

describe('freePort', () => {
  it('hands out a port a server can listen on, below the ephemeral range where there is one', async () => {
    const ports = await Promise.all(Array.from({ length: 5 }, () => freePort()));
    // Null off Linux: any free port will do there.
    const rangeStart = ephemeralRangeStart();
    for (const port of ports) {
      expect(port).toBeGreaterThan(0);
      if (rangeStart !== null && rangeStart > 11_000) expect(port).toBeLessThan(rangeStart);
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
