export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Zekt cannot start; fix the configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export type Environment = Record<string, string | undefined>;
