import { randomBytes } from 'node:crypto';
import type { Environment } from '../config.js';

/** What the service needs to know about a GitHub simulator (a subset of `zekt-github-sim`'s info). */
export interface SimulatorCoordinates {
  apiUrl: string;
  oidcIssuer: string;
  app: { id: number; privateKeyPem: string; webhookSecret: string; clientId?: string; clientSecret?: string };
}

/**
 * The environment that points the service at a simulator instead of GitHub: `zekt dev`, the
 * integration harness and the end-to-end test all run the service this way.
 */
export function environmentForSimulator(
  sim: SimulatorCoordinates,
  service: { port: number; dataDir: string; logLevel?: string; nodeEnv?: string; databaseUrl?: string },
): Environment {
  return {
    NODE_ENV: service.nodeEnv ?? 'development',
    HOST: '127.0.0.1',
    PORT: String(service.port),
    ZEKT_BASE_URL: `http://127.0.0.1:${service.port}`,
    ZEKT_DATA_DIR: service.dataDir,
    GITHUB_APP_ID: String(sim.app.id),
    GITHUB_PRIVATE_KEY: sim.app.privateKeyPem,
    GITHUB_WEBHOOK_SECRET: sim.app.webhookSecret,
    // The console's login runs against the simulator's OAuth pages (GITHUB_URL follows from the API URL).
    ...(sim.app.clientId && sim.app.clientSecret
      ? { GITHUB_CLIENT_ID: sim.app.clientId, GITHUB_CLIENT_SECRET: sim.app.clientSecret }
      : {}),
    GITHUB_API_URL: sim.apiUrl,
    ZEKT_OIDC_ISSUER: sim.oidcIssuer,
    ZEKT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: service.logLevel ?? 'warn',
    // Several such processes share a machine (tests, the bench, zekt dev): each takes a free port.
    ZEKT_METRICS_PORT: '0',
    ...(service.databaseUrl ? { DATABASE_URL: service.databaseUrl } : {}),
  };
}
