/**
 * A mistake in how the simulator was driven (programmatic API, control API or CLI): an unknown
 * repository, a malformed input. The control API answers it with 400 `{ error }`.
 */
export class SimInputError extends Error {
  override readonly name: string = 'SimInputError';
}

/**
 * The input names something the simulator does not know where it must (e.g. an organisation). The
 * control API answers it with 404 `{ error }`; in-process callers see a `SimInputError`.
 */
export class SimNotFoundError extends SimInputError {
  override readonly name: string = 'SimNotFoundError';
}
