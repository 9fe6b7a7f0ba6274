import { type FormEvent, useState } from 'react';
import { STALE_AFTER } from '../api/changes';
import { allPages, api, ok } from '../api/client';
import { Field, InlineField } from '../components/field';
import { Page } from '../components/page';
import { Empty, QueryView } from '../components/states';
import { Switch } from '../components/switch';
import { QueryTable } from '../components/table';
import { Time } from '../components/time';
import { useAction, useInvalidate } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';
import { Link, setQuery, useLocation } from '../router';
import { useSession } from '../session';
import { loadAllRepositories, splitName } from './repositories';

const WORKFLOW_FILE = /^[A-Za-z0-9._-]+\.ya?ml$/;

/**
 * Provider › Zekt Workflows: per enabled provider repository, the workflows Zekt has seen in runs
 * (or that were whitelisted before their first run), the whitelist switch, how many runs were
 * blocked, and "Create service" for a whitelisted one.
 */
export function WorkflowsView() {
  const me = useSession();
  const { query } = useLocation();
  const providers = useQuery(['repositories', 'providers'], async () =>
    (await loadAllRepositories(me.accounts)).filter((r) => r.provider.enabled),
  );
  const chosen = query.get('repo') ?? providers.data?.[0]?.fullName;
  return (
    <Page
      title="Zekt Workflows"
      intro="Only whitelisted workflows are routed; runs of the others are blocked (and still counted). Publish a whitelisted workflow as a service for consumers."
    >
      <QueryView query={providers} what="provider repositories">
        {(list) =>
          list.length === 0 || !chosen ? (
            <Empty title="No provider repository yet.">
              Enable one in <Link to="/provider/repos">Provider › Zekt Repos</Link>; its workflows appear here
              after their first run, or whitelist one by file name.
            </Empty>
          ) : (
            <>
              <InlineField label="Repository">
                <select
                  value={chosen}
                  onChange={(event) => setQuery({ repo: event.target.value }, { push: true })}
                >
                  {list.map((r) => (
                    <option key={r.id} value={r.fullName}>
                      {r.fullName}
                    </option>
                  ))}
                </select>
              </InlineField>
              <RepositoryWorkflows key={chosen} fullName={chosen} />
            </>
          )
        }
      </QueryView>
    </Page>
  );
}

function RepositoryWorkflows({ fullName }: { fullName: string }) {
  const path = splitName(fullName);
  const workflows = useQuery(['workflows', fullName], () =>
    allPages(async (cursor) => {
      const page = await ok(
        api.GET('/api/v1/repositories/{owner}/{repo}/workflows', {
          params: { path, query: { limit: '100', ...(cursor ? { cursor } : {}) } },
        }),
      );
      return { items: page.workflows, nextCursor: page.nextCursor };
    }),
  );
  const invalidate = useInvalidate();
  const whitelist = async (file: string, whitelisted: boolean) => {
    await ok(
      api.PUT('/api/v1/repositories/{owner}/{repo}/workflows/{file}', {
        params: { path: { ...path, file } },
        body: { whitelisted },
      }),
    );
    await invalidate(...STALE_AFTER.whitelist);
  };
  return (
    <>
      <QueryTable
        query={workflows}
        what="workflows"
        rows={(list) => list}
        rowKey={(workflow) => workflow.path}
        label={`Workflows of ${fullName}`}
        region="Workflows"
        empty={
          <Empty title={`No workflow of ${fullName} seen yet.`}>
            Workflows appear after their first run; whitelist one ahead of it below.
          </Empty>
        }
        columns={[
          {
            header: 'Workflow',
            rowHeader: true,
            cell: (workflow) => (
              <>
                {workflow.name ?? workflow.file}
                <div className="muted small">{workflow.path}</div>
              </>
            ),
          },
          { header: 'Last run seen', cell: (workflow) => <Time iso={workflow.lastSeenAt} /> },
          { header: 'Blocked runs', className: 'number', cell: (workflow) => workflow.blockedCount },
          {
            header: 'Whitelist',
            cell: (workflow) => (
              <Switch
                id={`whitelist-${workflow.file}`}
                label={`Whitelist ${workflow.file}`}
                checked={workflow.whitelisted}
                stateText={(on) => (on ? 'Whitelisted' : 'Blocked')}
                onChange={(next) => whitelist(workflow.file, next)}
              />
            ),
          },
          {
            header: 'Service',
            cell: (workflow) =>
              workflow.whitelisted ? (
                <Link
                  className="button"
                  to={`/provider/services/new?repository=${encodeURIComponent(fullName)}&workflow=${encodeURIComponent(workflow.file)}`}
                >
                  Create service<span className="sr-only"> from {workflow.file}</span>
                </Link>
              ) : (
                <span className="muted">whitelist first</span>
              ),
          },
        ]}
      />
      <DeclareWorkflow onSave={(file) => whitelist(file, true)} />
    </>
  );
}

/** Whitelists a workflow by its file name before its first run. */
function DeclareWorkflow({ onSave }: { onSave: (file: string) => Promise<void> }) {
  const [file, setFile] = useState('');
  const [checked, setChecked] = useState<string | undefined>();
  const save = useAction(async (name: string) => {
    await onSave(name);
    return true;
  });
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const name = file.trim();
    if (!WORKFLOW_FILE.test(name)) {
      setChecked('Give the file name under .github/workflows, e.g. deploy.yml');
      return;
    }
    setChecked(undefined);
    if (await save.run(name)) setFile('');
  };
  return (
    <form className="card form-inline" onSubmit={(event) => void submit(event)} noValidate>
      <h2>Whitelist a workflow before its first run</h2>
      <Field
        label="Workflow file"
        hint="The file name under .github/workflows"
        error={checked ?? save.error?.detail}
      >
        <input value={file} onChange={(event) => setFile(event.target.value)} placeholder="deploy.yml" />
      </Field>
      <button type="submit" disabled={save.pending}>
        {save.pending ? 'Whitelisting…' : 'Whitelist'}
      </button>
    </form>
  );
}
