import { type FormEvent, useState } from 'react';
import { STALE_AFTER } from '../api/changes';
import { allPages, api, ok, type Service } from '../api/client';
import { Field } from '../components/field';
import { Page } from '../components/page';
import { Empty, InlineError, QueryView } from '../components/states';
import { useAction } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';
import { Link, navigate, useLocation } from '../router';
import { useSession } from '../session';
import { loadAllRepositories, splitName } from './repositories';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const EVENT_TYPE = /^[A-Za-z0-9._:-]{1,100}$/;
const DEFAULT_EVENT_TYPE = 'zekt-workflow-completed';

type FieldName = 'repository' | 'workflow' | 'slug' | 'eventType' | 'description' | 'tags';
type Errors = Partial<Record<FieldName | 'form', string>>;

/** Which field an API problem is about, so its detail is shown next to it. */
const PROBLEM_FIELDS: Record<string, FieldName> = {
  invalid_slug: 'slug',
  slug_taken: 'slug',
  invalid_event_type: 'eventType',
  invalid_workflow_file: 'workflow',
  workflow_not_whitelisted: 'workflow',
  provider_not_enabled: 'repository',
  repository_not_found: 'repository',
};

interface Draft {
  repository: string;
  workflow: string;
  slug: string;
  eventType: string;
  description: string;
  tags: string;
  visibility: 'public' | 'organization';
  published: boolean;
}

function parseTags(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
}

/** The form's own checks, before anything is sent. */
function check(draft: Draft, creating: boolean): Errors {
  const errors: Errors = {};
  if (creating && !draft.repository) errors.repository = 'Choose the provider repository.';
  if (creating && !draft.workflow) errors.workflow = 'Choose a whitelisted workflow.';
  if (!SLUG.test(draft.slug))
    errors.slug = 'Use 1–63 lower-case letters, digits or dashes, starting with a letter or digit.';
  if (draft.eventType && !EVENT_TYPE.test(draft.eventType))
    errors.eventType = 'Use 1–100 letters, digits, dots, underscores, colons or dashes.';
  if (draft.description.length > 2000) errors.description = 'At most 2,000 characters.';
  const tags = parseTags(draft.tags);
  if (tags.length > 20 || tags.some((t) => t.length > 40))
    errors.tags = 'At most 20 tags of up to 40 characters.';
  return errors;
}

/** Provider › Services › new or edit: slug, description, tags, visibility, event type, publish. */
export function ServiceFormView({ serviceId }: { serviceId: string | undefined }) {
  const existing = useQuery(['services', serviceId ?? 'new'], () =>
    serviceId
      ? ok(api.GET('/api/v1/services/{id}', { params: { path: { id: serviceId } } }))
      : Promise.resolve(null),
  );
  return (
    <Page title={serviceId ? 'Edit service' : 'New service'}>
      <QueryView query={existing} what="the service">
        {(service) => <ServiceForm key={service?.id ?? 'new'} service={service} />}
      </QueryView>
    </Page>
  );
}

function ServiceForm({ service }: { service: Service | null }) {
  const me = useSession();
  const { query } = useLocation();
  const creating = service === null;
  const [draft, setDraft] = useState<Draft>({
    repository: service?.repository ?? query.get('repository') ?? '',
    workflow: service?.workflow ?? query.get('workflow') ?? '',
    slug: service?.slug ?? '',
    eventType: service?.eventType ?? '',
    description: service?.description ?? '',
    tags: service?.tags.join(', ') ?? '',
    visibility: service?.visibility ?? 'public',
    published: service?.published ?? false,
  });
  const [errors, setErrors] = useState<Errors>({});
  const providers = useQuery(['repositories', 'providers'], async () =>
    (await loadAllRepositories(me.accounts)).filter((r) => r.provider.enabled),
  );
  const workflows = useQuery(['workflows', draft.repository, 'whitelisted'], async () => {
    if (!creating || !draft.repository) return [];
    const list = await allPages(async (cursor) => {
      const page = await ok(
        api.GET('/api/v1/repositories/{owner}/{repo}/workflows', {
          params: {
            path: splitName(draft.repository),
            query: { limit: '100', ...(cursor ? { cursor } : {}) },
          },
        }),
      );
      return { items: page.workflows, nextCursor: page.nextCursor };
    });
    return list.filter((w) => w.whitelisted);
  });
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => setDraft((d) => ({ ...d, [name]: value }));

  const save = useAction(
    async () => {
      const common = {
        slug: draft.slug,
        description: draft.description,
        tags: parseTags(draft.tags),
        visibility: draft.visibility,
        published: draft.published,
        ...(draft.eventType ? { eventType: draft.eventType } : {}),
      };
      const saved = service
        ? await ok(api.PATCH('/api/v1/services/{id}', { params: { path: { id: service.id } }, body: common }))
        : await ok(
            api.POST('/api/v1/services', {
              body: { repository: draft.repository, workflow: draft.workflow, ...common },
            }),
          );
      navigate(`/provider/services?saved=${encodeURIComponent(saved.slug)}`);
      return saved;
    },
    { invalidates: STALE_AFTER.service },
  );

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const found = check(draft, creating);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    await save.run();
  };

  // The API's problem goes next to the field it is about (or above the buttons).
  const problem = save.error;
  const problemField = problem ? (PROBLEM_FIELDS[problem.code] ?? 'form') : undefined;
  const errorOf = (name: FieldName) => errors[name] ?? (problemField === name ? problem?.detail : undefined);

  return (
    <form className="card form" onSubmit={(event) => void submit(event)} noValidate aria-label="Service">
      {creating ? (
        <>
          <Field label="Provider repository" error={errorOf('repository')}>
            <select
              value={draft.repository}
              onChange={(event) => setDraft((d) => ({ ...d, repository: event.target.value, workflow: '' }))}
            >
              <option value="">Choose…</option>
              {(providers.data ?? []).map((r) => (
                <option key={r.id} value={r.fullName}>
                  {r.fullName}
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Workflow"
            hint="Only whitelisted workflows (Zekt Workflows) can be published."
            error={errorOf('workflow')}
          >
            <select value={draft.workflow} onChange={(event) => set('workflow', event.target.value)}>
              <option value="">Choose…</option>
              {(workflows.data ?? []).map((w) => (
                <option key={w.file} value={w.file}>
                  {w.file}
                </option>
              ))}
              {draft.workflow && !(workflows.data ?? []).some((w) => w.file === draft.workflow) ? (
                <option value={draft.workflow}>{draft.workflow}</option>
              ) : null}
            </select>
          </Field>
          {providers.data?.length === 0 ? (
            <Empty title="No provider repository yet.">
              Enable one in <Link to="/provider/repos">Provider › Zekt Repos</Link> first.
            </Empty>
          ) : null}
        </>
      ) : (
        <p>
          <strong>{service.repository}</strong> · {service.workflow}
        </p>
      )}
      <Field
        label="Slug"
        hint="Lower-case letters, digits and dashes; unique in your account."
        error={errorOf('slug')}
      >
        <input value={draft.slug} onChange={(event) => set('slug', event.target.value)} autoComplete="off" />
      </Field>
      <Field label="Description" error={errorOf('description')}>
        <textarea
          value={draft.description}
          rows={3}
          onChange={(event) => set('description', event.target.value)}
        />
      </Field>
      <Field label="Tags" hint="Separated by commas, e.g. deploy, production" error={errorOf('tags')}>
        <input value={draft.tags} onChange={(event) => set('tags', event.target.value)} />
      </Field>
      <Field
        label="Event type"
        hint={`The repository_dispatch type consumers’ workflows listen for (default ${DEFAULT_EVENT_TYPE}); a run’s message may name its own.`}
        error={errorOf('eventType')}
      >
        <input
          value={draft.eventType}
          placeholder={DEFAULT_EVENT_TYPE}
          onChange={(event) => set('eventType', event.target.value)}
        />
      </Field>
      <fieldset className="field">
        <legend>Visibility</legend>
        <label className="choice">
          <input
            type="radio"
            name="visibility"
            checked={draft.visibility === 'public'}
            onChange={() => set('visibility', 'public')}
          />{' '}
          Public — any Zekt account may request access
        </label>
        <label className="choice">
          <input
            type="radio"
            name="visibility"
            checked={draft.visibility === 'organization'}
            onChange={() => set('visibility', 'organization')}
          />{' '}
          Organization — only members of your account
        </label>
      </fieldset>
      <label className="choice">
        <input
          type="checkbox"
          checked={draft.published}
          onChange={(event) => set('published', event.target.checked)}
        />{' '}
        Publish in the Directory
      </label>
      <InlineError error={problemField === 'form' ? problem : undefined} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={save.pending}>
          {save.pending ? 'Saving…' : creating ? 'Create service' : 'Save'}
        </button>
        <Link to="/provider/services">Cancel</Link>
      </div>
    </form>
  );
}
