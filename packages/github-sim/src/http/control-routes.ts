import type { FastifyInstance } from 'fastify';
import { SimInputError, SimNotFoundError } from '../sim-input-error.js';
import type { GitHubSimulator } from '../simulator-api.js';
import type {
  ConsumerWorkflowInput,
  CreateInstallationInput,
  FaultRule,
  MintOidcTokenInput,
  RerunWorkflowInput,
  RunWorkflowInput,
  WebhookDropRule,
} from '../types.js';

function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new SimInputError(`${what}: the body must be a JSON object`);
  return body as Record<string, unknown>;
}

function installationId(raw: string): number {
  if (!/^\d+$/.test(raw)) throw new SimInputError(`installation id must be a number; got ${raw}`);
  return Number(raw);
}

function repositoryList(body: unknown, what: string): string[] {
  const { repositories } = objectBody(body, what);
  if (!Array.isArray(repositories) || repositories.some((name) => typeof name !== 'string')) {
    throw new SimInputError(`${what}: body must be { "repositories": ["name", ...] }`);
  }
  return repositories as string[];
}

/**
 * Register with `{ prefix: '/_sim' }`: the simulator's own JSON control API, mirroring the
 * programmatic API for tests that run the simulator as a separate process (and for the CLI).
 * Bad input answers 400 `{ error }`; an unknown organisation 404 `{ error }`.
 */
export async function controlPlugin(
  instance: FastifyInstance,
  options: { sim: GitHubSimulator },
): Promise<void> {
  const { sim } = options;

  instance.setErrorHandler((error, _request, reply) => {
    if (error instanceof SimNotFoundError) return reply.code(404).send({ error: error.message });
    const code = (error as { code?: unknown }).code;
    if (error instanceof SimInputError || (typeof code === 'string' && code.startsWith('FST_ERR_CTP'))) {
      return reply.code(400).send({ error: (error as Error).message });
    }
    return reply.code(500).send({ error: error instanceof Error ? error.message : String(error) });
  });
  instance.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: `no control endpoint ${request.method} ${request.url}` }),
  );

  instance.get('/app', async () => sim.app);
  instance.get('/apps', async () => sim.apps());

  instance.put('/app/webhook', async (request) => {
    const { url } = objectBody(request.body, 'PUT /_sim/app/webhook');
    if (url !== null && typeof url !== 'string')
      throw new SimInputError('body must be { "url": "<http(s) URL>" | null }');
    sim.setAppWebhookUrl(url);
    return sim.app;
  });

  instance.post('/installations', async (request, reply) => {
    const body = objectBody(request.body, 'POST /_sim/installations') as unknown as CreateInstallationInput;
    return reply.code(201).send(await sim.createInstallation(body));
  });

  instance.post<{ Params: { id: string } }>('/installations/:id/repositories', async (request) =>
    sim.addRepositories(installationId(request.params.id), repositoryList(request.body, 'add repositories')),
  );

  instance.delete<{ Params: { id: string } }>('/installations/:id/repositories', async (request) =>
    sim.removeRepositories(
      installationId(request.params.id),
      repositoryList(request.body, 'remove repositories'),
    ),
  );

  instance.delete<{ Params: { id: string } }>('/installations/:id', async (request) =>
    sim.deleteInstallation(installationId(request.params.id)),
  );

  instance.put<{ Params: { org: string; login: string } }>(
    '/orgs/:org/members/:login',
    async (request, reply) => {
      sim.addOrgMember(request.params.org, request.params.login);
      return reply.code(204).send();
    },
  );
  instance.delete<{ Params: { org: string; login: string } }>(
    '/orgs/:org/members/:login',
    async (request, reply) => {
      sim.removeOrgMember(request.params.org, request.params.login);
      return reply.code(204).send();
    },
  );

  instance.post<{ Params: { login: string } }>('/accounts/:login/rename', async (request, reply) => {
    const { login } = objectBody(request.body, 'POST /_sim/accounts/:login/rename');
    if (typeof login !== 'string') throw new SimInputError('body must be { "login": "<new login>" }');
    sim.renameAccount(request.params.login, login);
    return reply.code(204).send();
  });

  instance.put('/oauth/signed-in', async (request, reply) => {
    const body = objectBody(request.body, 'PUT /_sim/oauth/signed-in');
    const { login } = body;
    if (!('login' in body) || (login !== null && typeof login !== 'string')) {
      throw new SimInputError('body must be { "login": "<user>" } or { "login": null } to sign out');
    }
    sim.signIn(login);
    return reply.code(204).send();
  });

  instance.post<{ Params: { owner: string; repo: string } }>(
    '/repos/:owner/:repo/runs',
    async (request, reply) => {
      const body = objectBody(request.body, 'POST runs') as Omit<RunWorkflowInput, 'repository'>;
      const repository = `${request.params.owner}/${request.params.repo}`;
      return reply.code(201).send(await sim.runWorkflow({ ...body, repository }));
    },
  );

  instance.post<{ Params: { owner: string; repo: string; run_id: string } }>(
    '/repos/:owner/:repo/runs/:run_id/rerun',
    async (request, reply) => {
      if (!/^\d+$/.test(request.params.run_id)) throw new SimInputError('run id must be a number');
      const body = objectBody(request.body, 'POST rerun') as RerunWorkflowInput;
      const repository = `${request.params.owner}/${request.params.repo}`;
      return reply.code(201).send(await sim.rerunWorkflow(repository, Number(request.params.run_id), body));
    },
  );

  instance.post<{ Params: { owner: string; repo: string } }>(
    '/repos/:owner/:repo/webhooks',
    async (request) => {
      const { event, payload } = objectBody(request.body, 'POST webhooks');
      if (typeof event !== 'string')
        throw new SimInputError('body must be { "event": "<name>", "payload": { ... } }');
      return sim.sendRepositoryWebhook(`${request.params.owner}/${request.params.repo}`, event, payload);
    },
  );

  instance.post('/oidc/token', async (request) => {
    const body = objectBody(request.body, 'POST /_sim/oidc/token') as unknown as MintOidcTokenInput;
    return { token: await sim.mintOidcToken(body) };
  });

  instance.get<{ Querystring: { repository?: string } }>('/dispatches', async (request) =>
    sim.dispatches(request.query.repository === undefined ? {} : { repository: request.query.repository }),
  );

  instance.get<{ Querystring: { repository?: string } }>('/workflow-dispatches', async (request) =>
    sim.workflowDispatches(
      request.query.repository === undefined ? {} : { repository: request.query.repository },
    ),
  );

  instance.put('/ghes', async (request) => {
    const body = objectBody(request.body, 'PUT /_sim/ghes');
    if (!('version' in body)) {
      throw new SimInputError(
        'body must be { "version": "3.20" } (GitHub Enterprise Server) or { "version": null } (github.com)',
      );
    }
    sim.setGhesVersion(body.version as string | null);
    return { version: body.version };
  });

  instance.get('/journal', async () => sim.journal());
  instance.delete('/journal', async (_request, reply) => {
    sim.clearJournal();
    return reply.code(204).send();
  });

  instance.post('/faults', async (request, reply) => {
    const rule = objectBody(request.body, 'POST /_sim/faults') as unknown as FaultRule;
    return reply.code(201).send(sim.injectFaults(rule));
  });
  instance.get('/faults', async () => sim.faults());
  instance.delete('/faults', async (_request, reply) => {
    sim.clearFaults();
    return reply.code(204).send();
  });
  instance.delete<{ Params: { id: string } }>('/faults/:id', async (request, reply) => {
    sim.clearFaults(request.params.id);
    return reply.code(204).send();
  });

  // Only the self-resuming form: once suspended, no request could reach a `resume` endpoint.
  instance.post('/suspend', async (request, reply) => {
    const { forMs } = objectBody(request.body, 'POST /_sim/suspend');
    if (forMs === undefined) {
      throw new SimInputError(
        'body must be { "forMs": <milliseconds> }: the simulator resumes by itself after forMs (over HTTP nothing could resume it)',
      );
    }
    await sim.suspend({ forMs: forMs as number });
    // This answer is in flight, so it still goes out (with `Connection: close`).
    return reply.code(202).send({ suspended: true, forMs });
  });

  instance.post('/consumer-workflows', async (request, reply) => {
    const body = objectBody(
      request.body,
      'POST /_sim/consumer-workflows',
    ) as unknown as ConsumerWorkflowInput;
    return reply.code(201).send(sim.defineConsumerWorkflow(body));
  });
  instance.delete<{ Params: { id: string } }>('/consumer-workflows/:id', async (request, reply) => {
    sim.removeConsumerWorkflow(request.params.id);
    return reply.code(204).send();
  });
  instance.get<{ Querystring: { repository?: string } }>('/consumer-runs', async (request) =>
    sim.consumerRuns(request.query.repository === undefined ? {} : { repository: request.query.repository }),
  );

  instance.get('/webhook-deliveries', async () => sim.webhookDeliveries());
  instance.post('/webhook-drops', async (request, reply) => {
    const rule = objectBody(request.body, 'POST /_sim/webhook-drops') as WebhookDropRule;
    return reply.code(201).send(sim.dropWebhooks(rule));
  });
  instance.get('/webhook-drops', async () => sim.webhookDrops());
  instance.delete('/webhook-drops', async (_request, reply) => {
    sim.clearWebhookDrops();
    return reply.code(204).send();
  });
  instance.delete<{ Params: { id: string } }>('/webhook-drops/:id', async (request, reply) => {
    sim.clearWebhookDrops(request.params.id);
    return reply.code(204).send();
  });
  // `?hook_id=` names the hook when the GUID (the event's) went to several.
  instance.post<{ Params: { guid: string }; Querystring: { hook_id?: string } }>(
    '/webhook-deliveries/:guid/redeliver',
    async (request) => {
      const raw = request.query.hook_id;
      if (raw !== undefined && !/^\d+$/.test(raw))
        throw new SimInputError(`hook_id must be a number; got ${raw}`);
      return sim.redeliver(request.params.guid, raw === undefined ? {} : { hookId: Number(raw) });
    },
  );
}
