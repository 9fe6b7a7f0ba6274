/**
 * A mistake in how the simulator was driven (programmatic API, control API or CLI): an unknown
 * repository, a malformed input. The control API answers it with 400 `{ error }`.
 */
export class SimInputError extends Error {
  override readonly name = 'SimInputError';
}
