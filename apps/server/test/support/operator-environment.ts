/**
 * The test runner's environment without the service's settings, as on an operator's machine: a
 * `zekt` command a test runs sees only the settings the test gives it.
 */
export function operatorEnvironment(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && !/^(GITHUB_|ZEKT_|DATABASE_URL|PORT|NODE_ENV)/.test(entry[0]),
    ),
  );
}
