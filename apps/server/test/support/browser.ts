import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

/**
 * The Chromium the console's tests drive with playwright-core, found the way a new machine needs:
 * `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`, else Playwright's own download. Where there
 * is none and the machine can (Debian or Ubuntu, as root, with apt-get), Debian's `chromium` is
 * installed once, saying so; elsewhere the tests fail with one line that says what to install.
 * Nothing is skipped: a console test without a browser is a failure.
 */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** Browser tests wait this long for a first-time install of Chromium. */
export const BROWSER_SETUP_TIMEOUT_MS = 15 * 60_000;

export interface ChromiumSource {
  env?: NodeJS.ProcessEnv;
  /** Where Debian's package puts it; default /usr/bin/chromium. */
  debianPath?: string;
  /** Playwright's own browser, if it downloaded one (`npx playwright install chromium`). */
  playwrightPath?: () => string;
  canInstall?: () => boolean;
  install?: () => void;
}

/** Where Chromium is; installs Debian's when there is none and this machine allows it. */
export function findChromium(source: ChromiumSource = {}): string {
  const env = source.env ?? process.env;
  if (env.CHROMIUM_PATH) {
    if (!isFile(env.CHROMIUM_PATH)) {
      throw new Error(
        `CHROMIUM_PATH=${env.CHROMIUM_PATH} is not a file: point it at a Chromium or Chrome binary`,
      );
    }
    return env.CHROMIUM_PATH;
  }
  const debian = source.debianPath ?? DEBIAN_CHROMIUM;
  if (isFile(debian)) return debian;
  const playwright = safely(source.playwrightPath ?? (() => chromium.executablePath()));
  if (playwright && isFile(playwright)) return playwright;
  if (!(source.canInstall ?? canInstallWithApt)()) {
    throw new Error(
      "no Chromium for the console's tests: install Debian's chromium (apt-get install chromium), or set CHROMIUM_PATH to a Chromium binary",
    );
  }
  withInstallLock(() => {
    if (!isFile(debian)) (source.install ?? installWithApt)();
  });
  if (!isFile(debian)) {
    throw new Error(
      `installing Debian's chromium left no ${debian}: install it by hand (apt-get install chromium)`,
    );
  }
  return debian;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: findChromium(),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

function canInstallWithApt(): boolean {
  return (
    process.platform === 'linux' &&
    existsSync('/etc/debian_version') &&
    process.getuid?.() === 0 &&
    ['/usr/bin/apt-get', '/bin/apt-get'].some(existsSync)
  );
}

function installWithApt(): void {
  console.error(
    "[zekt tests] no Chromium found: installing Debian's chromium (apt-get install -y chromium) …",
  );
  const started = Date.now();
  const run = (args: string[]) =>
    execFileSync('apt-get', args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  run(['update', '-qq']);
  run(['install', '-y', '-qq', '--no-install-recommends', 'chromium']);
  console.error(
    `[zekt tests] installed ${DEBIAN_CHROMIUM} in ${Math.round((Date.now() - started) / 1000)} s`,
  );
}

/**
 * Test files run in parallel processes: one installs while the others wait for it. The lock is a
 * directory (created atomically); one left by a killed run expires after the install's timeout.
 */
function withInstallLock(work: () => void): void {
  const lock = join(tmpdir(), 'zekt-chromium-install.lock');
  const deadline = Date.now() + BROWSER_SETUP_TIMEOUT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (safely(() => statSync(lock).mtimeMs) ?? Date.now());
      if (age > BROWSER_SETUP_TIMEOUT_MS) safely(() => rmdirSync(lock));
      if (Date.now() > deadline)
        throw new Error('timed out waiting for another test process to install chromium');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    work();
  } finally {
    rmdirSync(lock);
  }
}

function isFile(path: string): boolean {
  return safely(() => statSync(path).isFile()) ?? false;
}

function safely<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
