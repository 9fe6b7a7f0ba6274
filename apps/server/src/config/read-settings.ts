import type { Environment } from './config-error.js';
import type { Setting } from './setting.js';
import { SETTINGS, type SettingName, type SettingValues } from './settings.js';

/** A variable's value as the settings see it: trimmed, and blank is unset. */
export function trimmedValue(env: Environment, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

/**
 * Reads `names` (every setting by default) in the table's order, each on its own; a bad value adds
 * its problem and reads as its default. `given` says which were set: "unset" and "refused" differ
 * to the rules relating them.
 */
export function readSettings<N extends SettingName>(
  env: Environment,
  names: readonly N[] = Object.keys(SETTINGS) as N[],
): { values: Pick<SettingValues, N>; given: (name: SettingName) => boolean; problems: string[] } {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const name of names) {
    const setting: Setting<unknown> = SETTINGS[name];
    const refined = setting.onlyWith;
    const skipped = refined !== undefined && (values[refined] ?? null) === null;
    values[name] = setting.read(skipped ? undefined : trimmedValue(env, name), name, problems);
  }
  return {
    values: values as Pick<SettingValues, N>,
    given: (name) => trimmedValue(env, name) !== undefined,
    problems,
  };
}
