import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from './cli-error.js';

interface LockOwner {
  pid: number;
  startedAt: string;
}

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/**
 * Takes `<dir>/dev.lock` for this process, so a second `zekt dev` on the same directory stops
 * before it empties the store a running one is using. The lock names its owner (pid and start
 * time); a lock whose process is gone (killed, crashed) is taken over.
 */
export function acquireDataDirLock(dir: string, now: () => Date = () => new Date()): DataDirLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'dev.lock');
  const me: LockOwner = { pid: process.pid, startedAt: now().toISOString() };
  // Two rounds: the second follows the removal of a stale lock.
  for (let round = 0; round < 2; round++) {
    try {
      writeFileSync(path, `${JSON.stringify(me)}\n`, { flag: 'wx' });
      return { path, release: () => releaseIfOwned(path, me.pid) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = readOwner(path);
    if (owner && isAlive(owner.pid))
      throw new CliError(
        `zekt dev: ${dir} is in use by another zekt dev (pid ${owner.pid}, started ${owner.startedAt}); ` +
          'stop that one first (Ctrl+C in its terminal), or give this one its own directory: ZEKT_DATA_DIR=<dir> npm start',
      );
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new CliError(`zekt dev: could not take ${path}: another zekt dev is starting on ${dir} right now`);
}

function readOwner(path: string): LockOwner | null {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    return Number.isInteger(owner.pid) && typeof owner.startedAt === 'string' ? (owner as LockOwner) : null;
  } catch {
    // Unreadable or half-written: treated as stale, like a lock whose owner is gone.
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function releaseIfOwned(path: string, pid: number): void {
  if (readOwner(path)?.pid !== pid) return;
  try {
    unlinkSync(path);
  } catch {
    // Already gone: nothing to release.
  }
}
