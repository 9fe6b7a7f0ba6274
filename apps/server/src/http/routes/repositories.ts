import Type from 'typebox';
import { toWorkflowPath } from '../../domain/workflow-path.js';
import { type HookSwitchFailure, switchRepositoryHook } from '../../setup/repository-hooks.js';
import { getRepository, listRepositories } from '../../store/accounts.js';
import { recordAudit } from '../../store/audit.js';
import type { HookRole } from '../../store/schema.js';
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
import { CURSOR_FIELDS, PageQuery, pageOf, readPage } from '../pagination.js';
import { HttpError } from '../problem.js';
import { repositoryView, workflowView } from '../views.js';
import { memberRepository } from './lookups.js';

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const Enabled = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });
const security = MANAGEMENT_SECURITY;

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
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.name]);
      const rows = await listRepositories(context.store.db, account.account_id, store);
      const page = pageOf(rows, limit, (row) => [row.full_name]);
      return {
        account: account.login,
        repositories: page.items.map(repositoryView),
        nextCursor: page.nextCursor,
      };
    },
  );

  /** The provider switch and the COMPLETION switch: the use case does the work, the route finds the repository. */
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
    const result = await switchRepositoryHook(context, {
      account,
      repository,
      role,
      enabled,
      actor: auditActor(caller),
    });
    if (result.outcome !== 'switched') throw hookSwitchProblem(result);
    return repositoryView((await getRepository(context.store.db, repository.repository_id))!);
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
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.name]);
      const rows = await listWorkflows(context.store.db, repository.repository_id, store);
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
      const repositoryId = repository.repository_id;
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
            accountIds: [repository.account_id],
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
      else await withinAccountCap(context, 'workflows', repository.account_id, whitelist);
      return workflowView((await getWorkflow(context.store.db, repositoryId, path))!);
    },
  );
}

/** The problem each failed hook switch answers with. */
function hookSwitchProblem(failure: HookSwitchFailure): HttpError {
  switch (failure.outcome) {
    case 'busy':
      // Another switch waits on GitHub: the same answer as GitHub not answering, try again.
      return new HttpError('github_unavailable', failure.detail);
    case 'installation_unavailable':
      return new HttpError('installation_unavailable', failure.detail);
    case 'github_rejected':
      return new HttpError(
        'github_rejected',
        failure.detail,
        { githubStatus: failure.githubStatus },
        { cause: failure.cause },
      );
    case 'github_unavailable':
      return new HttpError('github_unavailable', failure.detail, {}, { cause: failure.cause });
  }
}
