import type { Environment } from './config/config-error.js';

/**
 * The only module that reads the environment. Each setting is declared once, in the table of
 * config/settings.ts: `loadConfig` reads it, `zekt serve --help` lists it and docs/configuration.md
 * documents it from there.
 */
export { ConfigError, type Environment } from './config/config-error.js';
export {
  type AccountLimits,
  type AppSettings,
  type Config,
  githubWebUrlFor,
  type HttpLimits,
  type LoadConfigOptions,
  loadConfig,
  loadStoreConfig,
  type Mode,
} from './config/load-config.js';
export { SETTINGS } from './config/settings.js';

/** The process environment; the one place in the server that touches `process.env`. */
export function processEnvironment(): Environment {
  return process.env;
}
