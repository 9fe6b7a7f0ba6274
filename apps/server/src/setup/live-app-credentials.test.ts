import { afterEach, describe, expect, it } from 'vitest';
import { openTempStore } from '../../test/support/temp-store.js';
import { loadConfig } from '../config.js';
import { createManualClock } from '../domain/clock.js';
import { SECOND_MS } from '../domain/duration.js';
import { type RegisteredApp, storeRegisteredApp } from './app-credentials.js';
import { createLiveAppCredentials } from './live-app-credentials.js';

/** How a running process learns of an App another process registered, and what it costs meanwhile. */
const config = loadConfig({ ZEKT_SECRET: 'a'.repeat(64) });
const app: RegisteredApp = {
  appId: 42,
  slug: 'zekt',
  name: 'Zekt',
  htmlUrl: 'https://github.com/apps/zekt',
  owner: 'acme',
  privateKey: '-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----',
  webhookSecret: 'whsec',
  clientId: 'Iv1.abc',
  clientSecret: 'secret',
};

let dispose: (() => Promise<void>) | undefined;
afterEach(async () => {
  await dispose?.();
});

async function setUp() {
  const temp = await openTempStore();
  dispose = temp.dispose;
  const clock = createManualClock(Date.UTC(2026, 0, 1));
  const reads: number[] = [];
  // Counts the store's reads of the App: the cost of setup mode.
  const store = {
    get db() {
      reads.push(clock.now());
      return temp.store.db;
    },
  };
  const live = createLiveAppCredentials({ store, config, clock });
  return { temp, clock, reads, live };
}

describe('the App credentials of a running process', () => {
  it('reads the store again in setup mode: at once when asked fresh, else at most once a second', async () => {
    const { temp, clock, reads, live } = await setUp();
    expect(await live.get()).toBeNull();
    expect(await live.get()).toBeNull();
    expect(reads).toHaveLength(1);

    await storeRegisteredApp(temp.store.db, config.secret, app, clock.now());
    expect(await live.get()).toBeNull();
    clock.advance(SECOND_MS);
    expect(await live.get()).toEqual(expect.objectContaining({ source: 'store', appId: 42, slug: 'zekt' }));
    expect(reads).toHaveLength(2);
    // Found: kept, the store is not read again.
    await live.get({ fresh: true });
    expect(reads).toHaveLength(2);
  });

  it('reads at once when asked for a fresh answer (a webhook, a probe)', async () => {
    const { temp, clock, live } = await setUp();
    expect(await live.get()).toBeNull();
    await storeRegisteredApp(temp.store.db, config.secret, app, clock.now());
    expect(await live.get({ fresh: true })).toEqual(expect.objectContaining({ appId: 42 }));
  });

  it('reads at once after being told the store changed (it registered the App)', async () => {
    const { temp, clock, live } = await setUp();
    expect(await live.get()).toBeNull();
    await storeRegisteredApp(temp.store.db, config.secret, app, clock.now());
    live.invalidate();
    expect(await live.get()).toEqual(expect.objectContaining({ appId: 42 }));
  });

  it('never reads the store when the environment sets the App', async () => {
    const { reads, clock, temp } = await setUp();
    const environment = loadConfig({
      ZEKT_SECRET: 'a'.repeat(64),
      GITHUB_APP_ID: '7',
      GITHUB_PRIVATE_KEY: app.privateKey,
      GITHUB_WEBHOOK_SECRET: 'env-secret',
    });
    await storeRegisteredApp(temp.store.db, config.secret, app, clock.now());
    const live = createLiveAppCredentials({
      store: { db: temp.store.db },
      config: environment,
      clock,
    });
    expect(await live.get({ fresh: true })).toEqual(
      expect.objectContaining({ source: 'environment', appId: 7, webhookSecret: 'env-secret' }),
    );
    expect(reads).toEqual([]);
  });
});
