import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findChromium } from './browser.js';

/** How the console's tests find a browser on a machine that may have none. */
describe('findChromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'zekt-chromium-'));
  const file = (name: string) => {
    const path = join(dir, name);
    writeFileSync(path, '');
    return path;
  };
  const nowhere = join(dir, 'missing');
  const noInstall = { canInstall: () => false, install: () => expect.unreachable('no install') };

  it('takes CHROMIUM_PATH first, and says so when it points at nothing', () => {
    const chosen = file('chosen');
    expect(findChromium({ env: { CHROMIUM_PATH: chosen }, debianPath: file('debian'), ...noInstall })).toBe(
      chosen,
    );
    expect(() => findChromium({ env: { CHROMIUM_PATH: nowhere }, ...noInstall })).toThrow(
      `CHROMIUM_PATH=${nowhere} is not a file: point it at a Chromium or Chrome binary`,
    );
  });

  it("takes Debian's chromium, then Playwright's own download", () => {
    const debian = file('debian');
    const playwright = file('playwright');
    expect(
      findChromium({ env: {}, debianPath: debian, playwrightPath: () => playwright, ...noInstall }),
    ).toBe(debian);
    expect(
      findChromium({ env: {}, debianPath: nowhere, playwrightPath: () => playwright, ...noInstall }),
    ).toBe(playwright);
  });

  it('installs Debian’s chromium where it can, once, and fails in one line where it cannot', () => {
    const target = join(dir, 'installed');
    let installs = 0;
    const installing = {
      env: {},
      debianPath: target,
      playwrightPath: () => nowhere,
      canInstall: () => true,
      install: () => {
        installs++;
        writeFileSync(target, '');
      },
    };
    expect(findChromium(installing)).toBe(target);
    expect(findChromium(installing)).toBe(target);
    expect(installs).toBe(1);

    expect(() =>
      findChromium({ env: {}, debianPath: nowhere, playwrightPath: () => nowhere, ...noInstall }),
    ).toThrow(
      "no Chromium for the console's tests: install Debian's chromium (apt-get install chromium), or set CHROMIUM_PATH to a Chromium binary",
    );
    expect(() =>
      findChromium({
        env: {},
        debianPath: nowhere,
        playwrightPath: () => nowhere,
        canInstall: () => true,
        install: () => {},
      }),
    ).toThrow(`installing Debian's chromium left no ${nowhere}`);
  });
});
