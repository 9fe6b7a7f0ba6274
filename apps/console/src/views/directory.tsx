import { type FormEvent, useState } from 'react';
import { STALE_AFTER } from '../api/changes';
import { allPages, api, type DirectoryService, ok } from '../api/client';
import { Badge } from '../components/badge';
import { Field, InlineField } from '../components/field';
import { Modal } from '../components/modal';
import { Page } from '../components/page';
import { Empty, InlineError, QueryView } from '../components/states';
import { useAction } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';
import { Link, setQuery, useLocation } from '../router';
import { useSession } from '../session';
import { loadAllRepositories } from './repositories';
import { ENFORCEMENT_LABELS, SchemaFields } from './schema-fields';

/** Directory: published services visible to the user; search, tags, and Request access. */
export function DirectoryView() {
  const { query } = useLocation();
  const q = query.get('q') ?? '';
  const tag = query.get('tag') ?? '';
  const [text, setText] = useState(q);
  const services = useQuery(['directory', q, tag], () =>
    allPages(async (cursor) => {
      const page = await ok(
        api.GET('/api/v1/directory', {
          params: {
            query: {
              limit: '100',
              ...(q ? { q } : {}),
              ...(tag ? { tag } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      );
      return { items: page.services, nextCursor: page.nextCursor };
    }),
  );
  const [requested, setRequested] = useState<string | null>(null);
  const search = (event: FormEvent) => {
    event.preventDefault();
    setQuery({ q: text.trim() || undefined });
  };
  return (
    <Page
      title="Directory"
      intro="Services providers have published. Request access for the repository that should receive a service’s runs; the provider approves."
    >
      <search aria-label="Search the directory">
        <form className="toolbar" onSubmit={search}>
          <InlineField label="Search">
            <input
              type="search"
              value={text}
              onChange={(event) => setText(event.target.value)}
              placeholder="deploy"
            />
          </InlineField>
          <button type="submit">Search</button>
          {tag ? (
            <ul className="chips" aria-label="Active filters">
              <li>
                Tag: {tag}{' '}
                <button
                  type="button"
                  aria-label={`Remove filter tag ${tag}`}
                  onClick={() => setQuery({ tag: undefined })}
                >
                  ×
                </button>
              </li>
            </ul>
          ) : null}
        </form>
      </search>
      {requested ? (
        <p className="notice" role="status">
          Access to {requested} requested. The provider decides; follow it in{' '}
          <Link to="/consumer/subscriptions">Zekt Subscriptions</Link>.
        </p>
      ) : null}
      <QueryView query={services} what="the directory">
        {(list) =>
          list.length === 0 ? (
            <Empty title={q || tag ? 'No service matches.' : 'No published service yet.'}>
              {q || tag
                ? 'Try other words, or remove the filters.'
                : 'Providers publish services under Provider › Services.'}
            </Empty>
          ) : (
            <ul className="cards" aria-label="Services">
              {list.map((service) => (
                <DirectoryCard
                  key={service.id}
                  service={service}
                  onRequested={() => setRequested(service.slug)}
                />
              ))}
            </ul>
          )
        }
      </QueryView>
    </Page>
  );
}

function DirectoryCard({ service, onRequested }: { service: DirectoryService; onRequested: () => void }) {
  const [open, setOpen] = useState(false);
  return (
    <li className="card">
      <h2>{service.slug}</h2>
      <p className="muted small">
        by {service.provider} · {service.repository} · {service.workflow} · <code>{service.eventType}</code>
        {service.visibility === 'organization' ? ' · organization only' : ''}
      </p>
      {service.description ? <p>{service.description}</p> : null}
      <ServiceContract service={service} />
      {service.tags.length > 0 ? (
        <div className="tags">
          {service.tags.map((tag) => (
            <button key={tag} type="button" className="tag" onClick={() => setQuery({ tag }, { push: true })}>
              <span className="sr-only">Filter by tag </span>
              {tag}
            </button>
          ))}
        </div>
      ) : null}
      <button type="button" className="primary" onClick={() => setOpen(true)}>
        Request access<span className="sr-only"> to {service.slug}</span>
      </button>
      {open ? (
        <RequestAccess
          service={service}
          onClose={() => setOpen(false)}
          onDone={() => {
            setOpen(false);
            onRequested();
          }}
        />
      ) : null}
    </li>
  );
}

/** What the service's message is: its schema's version and enforcement, the fields on demand. */
function ServiceContract({ service }: { service: DirectoryService }) {
  const [open, setOpen] = useState(false);
  if (service.schemaVersion === null) {
    return <p className="muted small">No message schema: the message is whatever JSON the provider sends.</p>;
  }
  return (
    <details onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>
        Message schema, version {service.schemaVersion} ·{' '}
        <Badge
          tone={
            service.enforcement === 'enforce' ? 'ok' : service.enforcement === 'warn' ? 'warn' : 'neutral'
          }
        >
          {service.enforcement === 'enforce'
            ? 'Enforced'
            : service.enforcement === 'warn'
              ? 'Warns'
              : 'Not checked'}
        </Badge>
      </summary>
      {open ? <DirectorySchema service={service} /> : null}
    </details>
  );
}

function DirectorySchema({ service }: { service: DirectoryService }) {
  const schema = useQuery(['directory-schema', service.id, service.schemaVersion], () =>
    ok(api.GET('/api/v1/directory/{id}/schema', { params: { path: { id: service.id }, query: {} } })),
  );
  return (
    <QueryView query={schema} what="the schema">
      {(version) => (
        <>
          <p className="small">{ENFORCEMENT_LABELS[version.enforcement]}</p>
          <SchemaFields version={version} slug={service.slug} />
        </>
      )}
    </QueryView>
  );
}

/** Chooses the repository the service delivers to, and sends the request. */
function RequestAccess(props: { service: DirectoryService; onClose: () => void; onDone: () => void }) {
  const me = useSession();
  const repositories = useQuery(['repositories', 'all'], () => loadAllRepositories(me.accounts));
  const [deliversTo, setDeliversTo] = useState('');
  const [checked, setChecked] = useState<string | undefined>();
  const request = useAction(
    async () => {
      await ok(api.POST('/api/v1/subscriptions', { body: { serviceId: props.service.id, deliversTo } }));
      props.onDone();
    },
    { invalidates: STALE_AFTER.subscription },
  );
  const submit = () => {
    if (!deliversTo) {
      setChecked('Choose the repository that receives the events.');
      return;
    }
    setChecked(undefined);
    void request.run();
  };
  return (
    <Modal
      open
      title={`Request access to ${props.service.slug}`}
      busy={request.pending}
      onClose={props.onClose}
      actions={
        <>
          <button type="button" className="primary" disabled={request.pending} onClick={submit}>
            {request.pending ? 'Requesting…' : 'Request access'}
          </button>
          <button type="button" disabled={request.pending} onClick={props.onClose}>
            Cancel
          </button>
        </>
      }
    >
      <p>
        Each run of {props.service.slug} will be sent to the repository you choose as a{' '}
        <code>repository_dispatch</code> event of type <code>{props.service.eventType}</code>; it needs a
        workflow with <code>on: repository_dispatch: types: [{props.service.eventType}]</code> on its default
        branch.
      </p>
      <QueryView query={repositories} what="your repositories">
        {(list) =>
          list.length === 0 ? (
            <InlineError error="None of your accounts’ installations has a repository: add one to the Zekt App on GitHub." />
          ) : (
            <Field label="Delivers to" error={checked ?? request.error?.detail}>
              <select value={deliversTo} onChange={(event) => setDeliversTo(event.target.value)}>
                <option value="">Choose a repository…</option>
                {list.map((r) => (
                  <option key={r.id} value={r.fullName}>
                    {r.fullName}
                  </option>
                ))}
              </select>
            </Field>
          )
        }
      </QueryView>
    </Modal>
  );
}
