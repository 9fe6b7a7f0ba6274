import type { AppIdentity } from './app-identity.js';
import type { AccountRecord, AppRecord, SimState } from './sim-state.js';
import type { InstallationPermissions, SimulatedApp } from './types.js';

/** What an App is besides its credentials: who owns it and what it asks of its installations. */
export interface AppSettings {
  owner: AccountRecord;
  permissions: InstallationPermissions;
  public: boolean;
  setupUrl: string | null;
  externalUrl: string | null;
  description: string | null;
}

/** Adds an App to the simulator, with its bot user (`<slug>[bot]`). */
export function addApp(state: SimState, identity: AppIdentity, settings: AppSettings): AppRecord {
  const app: AppRecord = {
    ...identity,
    ...settings,
    permissions: { ...settings.permissions },
    bot: state.getOrCreateAccount(`${identity.slug}[bot]`, 'Bot'),
  };
  state.apps.set(app.id, app);
  return app;
}

/** The App's settings without key objects: what the control API and `sim.app` expose. */
export function toSimulatedApp(app: AppRecord): SimulatedApp {
  return {
    id: app.id,
    slug: app.slug,
    name: app.name,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    privateKeyPem: app.privateKeyPem,
    webhookSecret: app.webhookSecret,
    webhookUrl: app.webhookUrl,
    events: [...app.events],
    callbackUrls: [...app.callbackUrls],
    hookId: app.hookId,
    owner: app.owner.login,
    permissions: { ...app.permissions },
    public: app.public,
    setupUrl: app.setupUrl,
  };
}
