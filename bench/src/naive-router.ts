import { createServer, type Server } from 'node:http';
import { App, createNodeMiddleware } from '@octokit/app';
import { Octokit } from '@octokit/core';
import { runClientPayload } from './run-client-payload.js';

/**
 * The naive router of `zekt bench --compare`: what a GitHub App that routes completion events
 * looks like when written the usual way with Octokit (`@octokit/app`'s webhook middleware verifies
 * the signature; the handler dispatches to every consumer with an installation Octokit and the
 * middleware answers once the handler is done). It stores nothing: a crash or a GitHub outage loses
 * events, and nothing paces, retries or records deliveries. It is the throughput Zekt must match
 * while doing all of that.
 */
export interface NaiveRouterOptions {
  appId: number;
  privateKey: string;
  webhookSecret: string;
  /** `@octokit/app`'s middleware serves the OAuth routes too, and wants the App's client. */
  clientId: string;
  clientSecret: string;
  apiUrl: string;
  eventType: string;
  consumers: Array<{ installationId: number; owner: string; repo: string }>;
}

/** Listens at `/api/github/webhooks`, Octokit's default path. */
export function createNaiveRouter(options: NaiveRouterOptions): Server {
  const app = new App({
    appId: options.appId,
    privateKey: options.privateKey,
    webhooks: { secret: options.webhookSecret },
    oauth: { clientId: options.clientId, clientSecret: options.clientSecret },
    Octokit: Octokit.defaults({ baseUrl: options.apiUrl }),
  });
  app.webhooks.on('workflow_run.completed', async ({ payload }) => {
    await Promise.all(
      options.consumers.map(async (consumer) => {
        const octokit = await app.getInstallationOctokit(consumer.installationId);
        await octokit.request('POST /repos/{owner}/{repo}/dispatches', {
          owner: consumer.owner,
          repo: consumer.repo,
          event_type: options.eventType,
          client_payload: runClientPayload(payload),
        });
      }),
    );
  });
  return createServer(createNodeMiddleware(app));
}
