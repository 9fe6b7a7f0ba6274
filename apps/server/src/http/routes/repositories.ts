import { randomUUID } from 'node:crypto';
import Type from 'typebox';
import { toWorkflowPath } from '../../domain/workflow-path.js';
import { GitHubApiError } from '../../github/github-client.js';
import { generateHookSecret } from '../../security/api-tokens.js';
import { getRepository, listRepositories, setRepositoryFlag } from '../../store/accounts.js';
import { recordAudit } from '../../store/audit.js';
import { beginHookPlacement, completeHookPlacement, deleteHook, getHook } from '../../store/hooks.js';
import { withLease } from '../../store/leases.js';
import type { AccountRow, HookRole, RepositoryRow } from '../../store/schema.js';
import { getWorkflow, listWorkflows, setWhitelisted } from '../../store/workflows.js';
import { withinAccountCap } from '../account-caps.js';
import {
  AUTH_PROBLEMS,
  CHANGE_PROBLEMS,
  PATH_PROBLEMS,
  problems,
  RepositoryPageSchema,
  RepositorySchema,
  WorkflowPageSchema,
  WorkflowSchema,
} from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { auditActor } from '../audit-actor.js';
import { type Caller, MANAGEMENT_SECURITY, memberAccount, requireCaller } from '../authenticate.js';
import { PageQuery, pageOf, readPage } from '../pagination.js';
import { HttpError } from '../problem.js';
import { repositoryView, workflowView } from '../views.js';
import { memberRepository } from './lookups.js';

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const Enabled = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });
const security = MANAGEMENT_SECURITY;
/** How long switching a hook may hold a repository: a few GitHub calls, each with its own timeout. */
const HOOK_SWITCH_LEASE_MS = 60_000;

/** Provider switch, repository lists and the workflow whitelist. */
export function registerRepositoryRoutes(
  api: App,
  context: Pick<AppContext, 'store' | 'clock' | 'baseUrl' | 'github' | 'secretBox' | 'limits'>,
): void {
  api.get(
    '/api/v1/accounts/:account/repositories',
    {
      schema: {
        summary: 'Repositories of an installation, with their provider and completion-tracking flags',
        tags: ['repositories'],
        security,
        params: Type.Object({ account: Type.String() }),
        querystring: Type.Object(PageQuery),
        response: {
          200: RepositoryPageSchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'account_not_found', 'invalid_cursor'),
        },
      },
    },
    async (request) => {
      const account = memberAccount(requireCaller(request), request.params.account);
      const { limit, store } = readPage(request.query, 1);
      const rows = await listRepositories(context.store.db, Number(account.account_id), store);
      const page = pageOf(rows, limit, (row) => [row.full_name]);
      return {
        account: account.login,
        repositories: page.items.map(repositoryView),
        nextCursor: page.nextCursor,
      };
    },
  );

  /**
   * The provider switch and the COMPLETION switch are the same operation on a different hook:
   * place (or remove) Zekt's webhook in the repository, then record the flag.
   */
  async function switchHook(
    caller: Caller,
    params: { owner: string; repo: string },
    enabled: boolean,
    role: HookRole,
  ) {
    const { repository, account } = await memberRepository(
      context.store.db,
      caller,
      params.owner,
      params.repo,
    );
    // One switch of a repository's hooks at a time, across processes: two concurrent "enable"s
    // would otherwise both create a hook and leave Zekt holding a secret GitHub does not use.
    const held = await withLease(
      context.store.db,
      {
        name: `repository-hooks:${repository.repository_id}`,
        owner: randomUUID(),
        ttlMs: HOOK_SWITCH_LEASE_MS,
        waitMs: HOOK_SWITCH_LEASE_MS,
        now: () => context.clock.now(),
      },
      async () => {
        if (enabled) await placeHook(context, account, repository, role);
        else await removeHook(context, account, repository, role);
        const flag = role === 'provider' ? 'provider_enabled' : 'completion_enabled';
        // Read again under the lease: another switch may have changed it while this one waited.
        const was = Boolean(
          (await getRepository(context.store.db, Number(repository.repository_id)))?.[flag],
        );
        await context.store.transaction(async (trx) => {
          const now = context.clock.now();
          await setRepositoryFlag(trx, Number(repository.repository_id), flag, enabled, now);
          if (was === enabled) return;
          await recordAudit(
            trx,
            {
              actor: auditActor(caller),
              accountIds: [Number(account.account_id)],
              action: role === 'provider' ? 'provider.switch' : 'completion_tracking.switch',
              target: { type: 'repository', id: repository.full_name },
              before: { enabled: was },
              after: { enabled },
            },
            now,
          );
        });
      },
    );
    if (!held.acquired) {
      throw new HttpError(
        'github_unavailable',
        `another request is switching the webhooks of ${repository.full_name} and GitHub has not answered it yet; try again`,
      );
    }
    return repositoryView((await getRepository(context.store.db, Number(repository.repository_id)))!);
  }

  api.put(
    '/api/v1/repositories/:owner/:repo/provider',
    {
      schema: {
        summary: 'Enable or disable a provider repository (places or removes its webhook)',
        tags: ['repositories'],
        security,
        params: RepoParams,
        body: Enabled,
        response: {
          200: RepositorySchema,
          ...problems(
            CHANGE_PROBLEMS,
            PATH_PROBLEMS,
            'repository_not_found',
            'installation_unavailable',
            'github_rejected',
            'github_unavailable',
          ),
        },
      },
    },
    async (request) => switchHook(requireCaller(request), request.params, request.body.enabled, 'provider'),
  );

  api.put(
    '/api/v1/repositories/:owner/:repo/completion-tracking',
    {
      schema: {
        summary:
          "The COMPLETION switch: places (or removes) a webhook in a consumer repository so its runs confirm and complete Zekt's deliveries",
        tags: ['repositories'],
        security,
        params: RepoParams,
        body: Enabled,
        response: {
          200: RepositorySchema,
          ...problems(
            CHANGE_PROBLEMS,
            PATH_PROBLEMS,
            'repository_not_found',
            'installation_unavailable',
            'github_rejected',
            'github_unavailable',
          ),
        },
      },
    },
    async (request) => switchHook(requireCaller(request), request.params, request.body.enabled, 'completion'),
  );

  api.get(
    '/api/v1/repositories/:owner/:repo/workflows',
    {
      schema: {
        summary: 'Workflows seen in runs or declared, with their whitelist flag and blocked counts',
        tags: ['workflows'],
        security,
        params: RepoParams,
        querystring: Type.Object(PageQuery),
        response: {
          200: WorkflowPageSchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'repository_not_found', 'invalid_cursor'),
        },
      },
    },
    async (request) => {
      const { repository } = await memberRepository(
        context.store.db,
        requireCaller(request),
        request.params.owner,
        request.params.repo,
      );
      const { limit, store } = readPage(request.query, 1);
      const rows = await listWorkflows(context.store.db, Number(repository.repository_id), store);
      const page = pageOf(rows, limit, (row) => [row.path]);
      return {
        repository: repository.full_name,
        workflows: page.items.map(workflowView),
        nextCursor: page.nextCursor,
      };
    },
  );

  api.put(
    '/api/v1/repositories/:owner/:repo/workflows/:file',
    {
      schema: {
        summary: 'Whitelist a workflow (only whitelisted workflows are routed)',
        tags: ['workflows'],
        security,
        params: Type.Object({ owner: Type.String(), repo: Type.String(), file: Type.String() }),
        body: Type.Object({ whitelisted: Type.Boolean() }, { additionalProperties: false }),
        response: {
          200: WorkflowSchema,
          ...problems(
            CHANGE_PROBLEMS,
            PATH_PROBLEMS,
            'repository_not_found',
            'invalid_workflow_file',
            'limit_reached',
          ),
        },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { repository } = await memberRepository(
        context.store.db,
        caller,
        request.params.owner,
        request.params.repo,
      );
      const path = toWorkflowPath(request.params.file);
      if (path === null) {
        throw new HttpError(
          'invalid_workflow_file',
          `${request.params.file} is not a workflow file name: use the file name under .github/workflows, e.g. deploy.yml`,
        );
      }
      const repositoryId = Number(repository.repository_id);
      const whitelisted = request.body.whitelisted;
      const whitelist = async (db: typeof context.store.db) => {
        const was = Boolean((await getWorkflow(db, repositoryId, path))?.whitelisted);
        const now = context.clock.now();
        await setWhitelisted(db, repositoryId, path, whitelisted, now);
        if (was === whitelisted) return;
        await recordAudit(
          db,
          {
            actor: auditActor(caller),
            accountIds: [Number(repository.account_id)],
            action: 'workflow.whitelist',
            target: { type: 'workflow', id: `${repository.full_name}/${path}` },
            before: { whitelisted: was },
            after: { whitelisted },
          },
          now,
        );
      };
      // Naming a new file adds a workflow: that one counts against the account's cap.
      if (await getWorkflow(context.store.db, repositoryId, path)) await context.store.transaction(whitelist);
      else await withinAccountCap(context, 'workflows', Number(repository.account_id), whitelist);
      return workflowView((await getWorkflow(context.store.db, repositoryId, path))!);
    },
  );
}

/**
 * Where a hook of `role` points. The two roles' hooks differ by URL because GitHub refuses a second
 * hook with the URL and events of one a repository already has ("Hook already exists"), and a
 * repository may be a provider and a consumer at once; the query names the role for people reading
 * the repository's settings (Zekt tells hooks apart by their ids).
 */
export function hookUrl(baseUrl: string, role: HookRole): string {
  return role === 'provider' ? `${baseUrl}/webhooks/github` : `${baseUrl}/webhooks/github?role=${role}`;
}

/**
 * Places Zekt's webhook in a repository (callers hold the repository's lease, `switchHook`):
 *
 * - the hook row (with its encrypted secret) is written before GitHub is asked, so the `ping`
 *   GitHub sends at once can be verified;
 * - when GitHub answers that the hook already exists (Zekt placed it and lost track: a crash, a
 *   restored backup), the hook pointing at this service is adopted: its secret is replaced with
 *   the one Zekt keeps, so GitHub and Zekt agree again.
 */
export async function placeHook(
  context: Pick<AppContext, 'store' | 'clock' | 'baseUrl' | 'github' | 'secretBox'>,
  account: AccountRow,
  repository: RepositoryRow,
  role: HookRole,
) {
  const db = context.store.db;
  const repositoryId = Number(repository.repository_id);
  const existing = await getHook(db, repositoryId, role);
  if (existing?.hook_id != null) return;
  const installationId = usableInstallation(account);
  const secret = generateHookSecret();
  const url = hookUrl(context.baseUrl, role);
  await beginHookPlacement(
    db,
    { repositoryId, role, secretEncrypted: context.secretBox.seal(secret), url },
    context.clock.now(),
  );
  const [owner, repo] = repository.full_name.split('/') as [string, string];
  const hook = { installationId, owner, repo, url, secret, events: ['workflow_run'] };
  try {
    let hookId: number;
    try {
      ({ hookId } = await context.github.createRepositoryHook(hook));
    } catch (error) {
      if (!isHookAlreadyThere(error)) throw error;
      const found = (await context.github.listRepositoryHooks(hook)).find((h) => h.url === url);
      if (!found) throw error;
      await context.github.updateRepositoryHook({ ...hook, hookId: found.id });
      hookId = found.id;
    }
    await completeHookPlacement(db, repositoryId, role, hookId, context.clock.now());
  } catch (error) {
    await deleteHook(db, repositoryId, role);
    throw githubFailure(error, `could not place the webhook in ${repository.full_name}`);
  }
}

/** GitHub's 422 for a hook whose URL and events a hook of the repository already has. */
function isHookAlreadyThere(error: unknown): boolean {
  return (
    error instanceof GitHubApiError &&
    error.status === 422 &&
    [error.message, ...error.details].some((text) => /already exists/i.test(text))
  );
}

export async function removeHook(
  context: Pick<AppContext, 'store' | 'github'>,
  account: AccountRow,
  repository: RepositoryRow,
  role: HookRole,
) {
  const db = context.store.db;
  const repositoryId = Number(repository.repository_id);
  const existing = await getHook(db, repositoryId, role);
  if (!existing) return;
  if (existing.hook_id !== null && account.installation_id !== null) {
    const [owner, repo] = repository.full_name.split('/') as [string, string];
    try {
      await context.github.deleteRepositoryHook({
        installationId: Number(account.installation_id),
        owner,
        repo,
        hookId: Number(existing.hook_id),
      });
    } catch (error) {
      throw githubFailure(error, `could not remove the webhook from ${repository.full_name}`);
    }
  }
  await deleteHook(db, repositoryId, role);
}

function usableInstallation(account: AccountRow): number {
  if (account.installation_id === null || account.uninstalled_at !== null) {
    throw new HttpError(
      'installation_unavailable',
      `the Zekt App is not installed on ${account.login}; install it again`,
    );
  }
  if (account.suspended_at !== null) {
    throw new HttpError(
      'installation_unavailable',
      `the Zekt App installation of ${account.login} is suspended; unsuspend it in GitHub`,
    );
  }
  return Number(account.installation_id);
}

function githubFailure(error: unknown, what: string): HttpError {
  if (!(error instanceof GitHubApiError))
    return new HttpError('github_unavailable', `${what}: GitHub did not answer`, {}, { cause: error });
  const unreachable =
    error.details.some((d) => /public Internet/i.test(d)) || /public Internet/i.test(error.message);
  const hint = unreachable
    ? ' — GitHub only delivers webhooks to URLs it can reach: set ZEKT_BASE_URL to this service’s public URL'
    : error.status === 403 || error.status === 404
      ? ' — the App needs the "Webhooks: read and write" repository permission; accept the new permissions in GitHub'
      : '';
  return new HttpError(
    'github_rejected',
    `${what}: ${error.message}${hint}`,
    { githubStatus: error.status ?? null },
    { cause: error },
  );
}
