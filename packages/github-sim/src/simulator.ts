import { createPrivateKey } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import Fastify from 'fastify';
import { renameAccount } from './account-renames.js';
import { createAppIdentity } from './app-identity.js';
import { addApp, toSimulatedApp } from './apps.js';
import { systemClock } from './clock.js';
import { ConsumerWorkflows } from './consumer-workflows.js';
import { FaultInjector } from './faults.js';
import { apiPlugin } from './http/api-plugin.js';
import { controlPlugin } from './http/control-routes.js';
import { installPlugin } from './http/install-routes.js';
import { manifestPlugin } from './http/manifest-routes.js';
import { OAUTH_PATH, oauthPlugin } from './http/oauth-routes.js';
import { oidcPlugin } from './http/oidc-routes.js';
import { createIdSequences } from './ids.js';
import {
  addRepositories,
  createInstallation,
  deleteInstallation,
  removeRepositories,
} from './installations.js';
import { Listener } from './listener.js';
import { userAccount } from './logins.js';
import { OIDC_ISSUER_PATH, OidcIssuer } from './oidc-issuer.js';
import { mintOidcToken } from './oidc-tokens.js';
import { addOrgMember, removeOrgMember } from './org-members.js';
import { sendRepositoryWebhook } from './repository-webhooks.js';
import { DEFAULT_PERMISSIONS, type SimContext } from './sim-context.js';
import { SimInputError } from './sim-input-error.js';
import { SimState } from './sim-state.js';
import { createSimUrls, oidcIssuerUrl } from './sim-urls.js';
import type { GitHubSimulator, SimulatorOptions } from './simulator-api.js';
import { WebhookDrops } from './webhook-drops.js';
import { redeliverWebhook } from './webhook-redelivery.js';
import { WebhookSender } from './webhook-sender.js';
import { recordDelivery } from './webhook-targets.js';
import { rerunWorkflow, runWorkflow } from './workflow-runs.js';

/** Longest self-resuming suspension (`suspend({ forMs })`, `POST /_sim/suspend`). */
const MAX_SUSPEND_MS = 60 * 60 * 1000;

function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function validateWebhookUrl(url: string | null): void {
  if (url === null) return;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new SimInputError(`the App webhook URL must be an http(s) URL or null; got ${JSON.stringify(url)}`);
  }
}

function validateGhesVersion(version: unknown): string | null {
  if (version === null) return null;
  if (typeof version !== 'string' || !/^\d+\.\d+$/.test(version)) {
    throw new SimInputError(
      `a GitHub Enterprise Server version is major.minor, e.g. "3.20", or null; got ${JSON.stringify(version)}`,
    );
  }
  return version;
}

/**
 * Starts a simulator on a loopback port.
 *
 * @example
 * const sim = await createGitHubSimulator();
 * const octokit = new Octokit({ baseUrl: sim.apiUrl });
 * await sim.close();
 */
export async function createGitHubSimulator(options: SimulatorOptions = {}): Promise<GitHubSimulator> {
  const clock = options.clock ?? systemClock;
  const ids = createIdSequences();
  const state = new SimState(ids, clock);
  const appOptions = options.app ?? {};
  if (appOptions.webhookUrl !== undefined) validateWebhookUrl(appOptions.webhookUrl);
  const identity = createAppIdentity(appOptions, ids.hook(), clock.now());
  const app = addApp(state, identity, {
    owner: state.getOrCreateAccount(`${identity.slug}-owner`, 'Organization'),
    permissions: DEFAULT_PERMISSIONS,
    public: true,
    setupUrl: null,
    externalUrl: null,
    description: null,
  });
  const oidc = await OidcIssuer.create(
    options.oidcTokenLifetimeSeconds,
    options.oidcSigningKeyPem === undefined ? undefined : createPrivateKey(options.oidcSigningKeyPem),
  );
  const urls = createSimUrls('');
  const shutdown = new AbortController();
  // Every running consumer workflow waits on this signal: many at once is normal, not a leak.
  setMaxListeners(0, shutdown.signal);
  const listener = new Listener();
  let resumeTimer: NodeJS.Timeout | undefined;
  const consumerWorkflows = new ConsumerWorkflows();
  // Deliveries are recorded through the context (declared next; the callback runs later).
  const webhookDrops = new WebhookDrops();
  const webhooks = new WebhookSender({
    clock,
    record: (delivery) => recordDelivery(ctx, delivery),
    nextDeliveryId: ids.webhookDelivery,
    drop: (target, event) => webhookDrops.take(target, event),
  });
  const ctx: SimContext = {
    state,
    ids,
    clock,
    app,
    urls,
    allowPrivateHookUrls: options.allowPrivateHookUrls ?? false,
    oidc,
    webhooks,
    webhookDrops,
    faults: new FaultInjector(),
    consumerWorkflows,
    ghesVersion: validateGhesVersion(options.ghesVersion ?? null),
    shutdown: shutdown.signal,
    onDispatch: options.onDispatch ?? (() => {}),
  };

  const sim: GitHubSimulator = {
    get url() {
      return urls.base;
    },
    get apiUrl() {
      return urls.api;
    },
    get oidcIssuer() {
      return oidcIssuerUrl(urls);
    },
    get app() {
      return toSimulatedApp(app);
    },
    apps: () => [...state.apps.values()].map(toSimulatedApp),
    setAppWebhookUrl(url) {
      validateWebhookUrl(url);
      app.webhookUrl = url;
    },
    createInstallation: (input) => createInstallation(ctx, input),
    addRepositories: (installationId, names) => addRepositories(ctx, installationId, names),
    removeRepositories: (installationId, fullNames) => removeRepositories(ctx, installationId, fullNames),
    deleteInstallation: (installationId) => deleteInstallation(ctx, installationId),
    addOrgMember: (org, login) => addOrgMember(ctx, org, login),
    removeOrgMember: (org, login) => removeOrgMember(ctx, org, login),
    renameAccount: (login, newLogin) => renameAccount(ctx, login, newLogin),
    signIn(login) {
      state.signedInUser = login === null ? null : userAccount(ctx, login, 'login');
    },
    runWorkflow: (input) => runWorkflow(ctx, input),
    rerunWorkflow: (repository, runId, input) => rerunWorkflow(ctx, repository, runId, input),
    mintOidcToken: (input) => mintOidcToken(ctx, input),
    sendRepositoryWebhook: (repository, event, payload) =>
      sendRepositoryWebhook(ctx, repository, event, payload),
    dispatches(filter = {}) {
      const wanted = filter.repository?.toLowerCase();
      return state.dispatches
        .filter((dispatch) => wanted === undefined || dispatch.repository.toLowerCase() === wanted)
        .map((dispatch) => structuredClone(dispatch));
    },
    workflowDispatches(filter = {}) {
      const wanted = filter.repository?.toLowerCase();
      return state.workflowDispatches
        .filter((dispatch) => wanted === undefined || dispatch.repository.toLowerCase() === wanted)
        .map((dispatch) => structuredClone(dispatch));
    },
    setGhesVersion(version) {
      ctx.ghesVersion = validateGhesVersion(version);
    },
    journal: () => structuredClone(state.journal),
    clearJournal() {
      state.journal.length = 0;
    },
    webhookDeliveries: () => structuredClone(state.deliveries),
    redeliver: (guid, options = {}) => redeliverWebhook(ctx, guid, options.hookId),
    dropWebhooks: (rule) => webhookDrops.add(rule),
    clearWebhookDrops: (id) => webhookDrops.clear(id),
    webhookDrops: () => webhookDrops.list(),
    injectFaults: (rule) => ctx.faults.inject(rule),
    clearFaults: (id) => ctx.faults.clear(id),
    faults: () => ctx.faults.list(),
    async suspend(options = {}) {
      const { forMs } = options;
      if (
        forMs !== undefined &&
        (typeof forMs !== 'number' || !Number.isInteger(forMs) || forMs < 1 || forMs > MAX_SUSPEND_MS)
      ) {
        throw new SimInputError(
          `forMs must be an integer number of milliseconds from 1 to ${MAX_SUSPEND_MS}`,
        );
      }
      clearTimeout(resumeTimer);
      resumeTimer = undefined;
      listener.suspend();
      if (forMs !== undefined) {
        resumeTimer = setTimeout(() => {
          resumeTimer = undefined;
          // Nobody awaits this; if the port was taken meanwhile the simulator stays suspended.
          listener.resume().catch(() => undefined);
        }, forMs);
      }
    },
    async resume() {
      clearTimeout(resumeTimer);
      resumeTimer = undefined;
      await listener.resume();
    },
    defineConsumerWorkflow: (input) => consumerWorkflows.define(ctx, input),
    removeConsumerWorkflow: (id) => consumerWorkflows.remove(id),
    consumerRuns: (filter) => consumerWorkflows.runs(filter),
    async close() {
      clearTimeout(resumeTimer);
      resumeTimer = undefined;
      // Latency faults and consumer runs stop waiting; their outgoing calls are aborted.
      shutdown.abort();
      await webhooks.close();
      await consumerWorkflows.close();
      await server.close();
    },
  };

  const server = Fastify({
    serverFactory: listener.factory,
    logger: false,
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: true,
  });
  await server.register(apiPlugin, { prefix: '/api/v3', ctx });
  await server.register(oidcPlugin, { prefix: OIDC_ISSUER_PATH, ctx });
  await server.register(oauthPlugin, { prefix: OAUTH_PATH, ctx });
  await server.register(controlPlugin, { prefix: '/_sim', sim });
  await server.register(installPlugin, { prefix: '/apps', ctx, sim });
  await server.register(manifestPlugin, { ctx, sim });
  server.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: `zekt-github-sim has no route ${request.method} ${request.url}` }),
  );

  const host = options.host ?? '127.0.0.1';
  await server.listen({ host, port: options.port ?? 0 });
  const address = server.server.address();
  if (address === null || typeof address === 'string')
    throw new Error('the simulator did not get a TCP port');
  listener.listening(host, address.port);
  Object.assign(urls, createSimUrls(`http://${urlHost(host)}:${address.port}`));
  return sim;
}
