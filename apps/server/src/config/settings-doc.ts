import type { Setting, SettingGroup } from './setting.js';
import { SETTINGS } from './settings.js';
import { TRACING_SETTINGS } from './tracing-settings.js';

/** Every variable Zekt reads, in the order `--help` and the docs list them. */
export const DOCUMENTED_SETTINGS = Object.entries({ ...SETTINGS, ...TRACING_SETTINGS }) as [
  string,
  Setting<unknown>,
][];
const entries = DOCUMENTED_SETTINGS;

/** The `Environment:` lines of `zekt serve --help`: every variable, with its default. */
export function settingsHelp(): string[] {
  return entries.map(([name, s]) => {
    const fallback = s.helpDefault === null ? '' : ` (default ${s.helpDefault})`;
    return `  ${name.padEnd(32)} ${s.help}${fallback}`;
  });
}

/** One group's table in docs/configuration.md; a pair documented together shares a row. */
export function settingsTable(group: SettingGroup): string {
  const rows = entries
    .filter(([, s]) => s.group === group && s.sameRowAs === undefined)
    .map(([name, s]) => {
      const names = [name, ...entries.filter(([, t]) => t.sameRowAs === name).map(([other]) => other)];
      const cells = [names.map((n) => `\`${n}\``).join(', '), s.docDefault, s.doc];
      return `| ${cells.join(' | ')} |`;
    });
  return ['| variable | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

const BEGIN = (group: SettingGroup) =>
  `<!-- the ${group} settings, generated from apps/server/src/config/: edit them there, then npx vitest run apps/server/src/config.test.ts -u -->`;
const END = '<!-- end of the generated settings -->';

/**
 * docs/configuration.md with each group's table regenerated between its markers; the prose around
 * them is the page's own.
 */
export function withSettingsTables(page: string, groups: readonly SettingGroup[]): string {
  let out = page;
  for (const group of groups) {
    const begin = out.indexOf(BEGIN(group));
    const end = out.indexOf(END, begin);
    if (begin < 0 || end < 0)
      throw new Error(`docs/configuration.md has no markers for the ${group} settings`);
    out = `${out.slice(0, begin)}${BEGIN(group)}\n\n${settingsTable(group)}\n\n${out.slice(end)}`;
  }
  return out;
}
