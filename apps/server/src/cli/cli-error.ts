/** An error the user can fix from its message alone: printed without a stack trace, exit code 2. */
export class CliError extends Error {
  override readonly name = 'CliError';
}
