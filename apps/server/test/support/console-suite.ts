import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { BROWSER_SETUP_TIMEOUT_MS, launchChromium } from './browser.js';
import { type ConsoleUser, openConsole } from './console-page.js';
import { setUpWorld, type World } from './demo-world.js';
import { type Harness, type HarnessOptions, startHarness } from './harness.js';

/** What a console suite's tests use: read them inside a test or hook, never at import time. */
export interface ConsoleSuite {
  readonly browser: Browser;
  readonly h: Harness;
  readonly world: World;
  /** Opens the console as `login` (signed in to the simulator); closed after the test. */
  open(login: string, viewport?: { width: number; height: number }): Promise<ConsoleUser>;
}

/**
 * The setup every console suite shares: one Chromium for the file, a fresh service and demo world
 * for each test, and after each test the users it opened closed, with any page problem they saw
 * (a console error, a failed request the test did not expect) failing the test.
 */
export function useConsoleSuite(harness: HarnessOptions = {}): ConsoleSuite {
  let browser: Browser | undefined;
  let h: Harness | undefined;
  let world: World | undefined;
  const users: ConsoleUser[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
  }, BROWSER_SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    h = await startHarness(harness);
    world = await setUpWorld(h);
  });
  afterEach(async () => {
    for (const user of users.splice(0)) {
      expect(user.problems, `${user.login}'s page`).toEqual([]);
      await user.context.close();
    }
    await h?.close();
  });

  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the console suite's ${what} is read before its hooks ran`);
    return value;
  };
  return {
    get browser() {
      return ready(browser, 'browser');
    },
    get h() {
      return ready(h, 'harness');
    },
    get world() {
      return ready(world, 'world');
    },
    async open(login, viewport) {
      const service = ready(h, 'harness');
      const user = await openConsole(ready(browser, 'browser'), {
        zektUrl: service.url,
        simUrl: service.sim.url,
        login,
        ...(viewport ? { viewport } : {}),
      });
      users.push(user);
      return user;
    },
  };
}
