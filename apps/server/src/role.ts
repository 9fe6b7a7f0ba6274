/** Which parts a process runs: the HTTP API, the background workers, or both. */
export type Role = 'api' | 'worker' | 'all';

/** One part of the service. */
export type Part = 'api' | 'worker';

export function runsPart(role: Role, part: Part): boolean {
  return role === 'all' || role === part;
}
