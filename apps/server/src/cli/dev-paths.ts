import { join, resolve } from 'node:path';
import type { Environment } from '../config.js';

/** The directory `zekt dev` and its lock live under (ZEKT_DATA_DIR, default ./.zekt). */
export function dataRoot(env: Environment): string {
  return resolve(env.ZEKT_DATA_DIR?.trim() || '.zekt');
}

/** Where `zekt dev` keeps its store and the demo's coordinates (emptied at every start). */
export function devDataDir(env: Environment): string {
  return join(dataRoot(env), 'dev');
}

export function demoStatePath(env: Environment): string {
  return join(devDataDir(env), 'demo.json');
}
