import { fileURLToPath } from 'node:url';

/** The server's CLI, to start `zekt serve` from: the bench loads the service as an operator runs it. */
export const ZEKT_CLI = fileURLToPath(import.meta.resolve('@zekt/server/dist/cli/main.js'));
