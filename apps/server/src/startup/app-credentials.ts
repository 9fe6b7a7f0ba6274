/**
 * What the start-up checks and `zekt doctor` verify of the GitHub App: the credentials in use,
 * from the environment or registered through setup (`setup/app-credentials.ts` decides which;
 * the environment wins), or none (setup mode).
 */
export type { AppCredentials } from '../setup/app-credentials.js';

/** Where a browser registers the App in setup mode (its code is printed at start; `zekt setup` prints it again). */
export function setupUrlOf(baseUrl: string): string {
  return `${baseUrl}/setup`;
}
