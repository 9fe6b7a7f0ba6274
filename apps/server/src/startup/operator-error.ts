/**
 * A mistake of the operator's that stops a command (a database that does not exist, a port in use,
 * a key GitHub refuses): printed as one line that says what is wrong and how to fix it, without a
 * stack trace, exit code 2.
 */
export class OperatorError extends Error {
  override readonly name = 'OperatorError';
  constructor(
    readonly summary: string,
    readonly fix: string,
    options?: { cause?: unknown },
  ) {
    super(`${summary}; ${fix}`, options);
  }
}
