import { useEffect, useState } from 'react';
import { STALE_AFTER } from '../api/changes';
import { type Answer, api, ok } from '../api/client';
import { Badge } from '../components/badge';
import { Field } from '../components/field';
import { Modal } from '../components/modal';
import { Page } from '../components/page';
import { InlineError, QueryView } from '../components/states';
import { Time } from '../components/time';
import { useAction } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';
import { Link } from '../router';
import { ENFORCEMENT_LABELS, type SchemaVersion } from './schema-fields';

type Service = Answer<'/api/v1/services/{id}', 'get'>;
type SaveAnswer = Answer<'/api/v1/services/{id}/schema', 'put'>;
type Enforcement = SaveAnswer['enforcement'];
type Change = SaveAnswer['compatibility']['changes'][number];
interface Problem {
  code?: string;
  detail?: string;
  pointer?: string;
  errors?: Array<{ pointer: string; message: string }>;
}

const STARTER = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": [],
  "properties": {}
}`;

/**
 * Provider › Services › a service's message schema: the editor (checked as you type: JSON here,
 * then the schema and the example by the server, which compiles it as it will check messages),
 * the enforcement, what a save would change for consumers (confirmed when breaking), and every
 * version with what changed from the one before.
 */
export function ServiceSchemaView({ serviceId }: { serviceId: string }) {
  // A service without a schema has nothing to read: its editor starts from a template.
  const loaded = useQuery(['services', serviceId, 'schema'], async () => {
    const service = await ok(api.GET('/api/v1/services/{id}', { params: { path: { id: serviceId } } }));
    const version =
      service.schemaVersion === null
        ? null
        : await ok(
            api.GET('/api/v1/services/{id}/schema', { params: { path: { id: serviceId }, query: {} } }),
          );
    return { service, version };
  });
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <Page
      title="Message schema"
      intro="A JSON Schema (draft 2020-12) for the message your workflow sends. Consumers see it in the Directory; Zekt checks each message against it when it arrives."
    >
      <QueryView query={loaded} what="the service and its schema">
        {({ service: svc, version }) => (
          <>
            <p>
              <strong>{svc.slug}</strong> · {svc.repository} · {svc.workflow} ·{' '}
              <Link to="/provider/services">All services</Link>
            </p>
            {saved ? (
              <p className="notice" role="status">
                {saved}
              </p>
            ) : null}
            <SchemaEditor
              key={`${version?.version ?? 0}:${svc.enforcement}`}
              service={svc}
              current={version}
              onSaved={setSaved}
              onEdit={() => setSaved(null)}
            />
            <VersionHistory serviceId={svc.id} version={version?.version ?? 0} />
          </>
        )}
      </QueryView>
    </Page>
  );
}

/** The JSON text's own problem (with its position), or its value. */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: `Not JSON: ${(error as Error).message}` };
  }
}

function SchemaEditor(props: {
  service: Service;
  current: SchemaVersion | null;
  onSaved: (message: string) => void;
  onEdit: () => void;
}) {
  const { service, current } = props;
  const [schemaText, setSchemaText] = useState(current ? JSON.stringify(current.schema, null, 2) : STARTER);
  const [exampleText, setExampleText] = useState(
    current?.example != null ? JSON.stringify(current.example, null, 2) : '',
  );
  const [enforcement, setEnforcement] = useState<Enforcement>(current ? service.enforcement : 'warn');
  const [check, setCheck] = useState<
    | { state: 'checking' }
    | { state: 'ok'; answer: SaveAnswer }
    | { state: 'problem'; problem: Problem }
    | null
  >(null);
  const [confirming, setConfirming] = useState<SaveAnswer | null>(null);

  const schema = parseJson(schemaText);
  const example =
    exampleText.trim() === '' ? ({ ok: true, value: undefined } as const) : parseJson(exampleText);
  const body = (acceptBreaking: boolean) => ({
    schema: schema.ok ? schema.value : undefined,
    enforcement,
    ...(example.ok && example.value !== undefined ? { example: example.value } : {}),
    ...(acceptBreaking ? { acceptBreaking: true } : {}),
  });

  // The server checks what the browser cannot (the schema compiles, the example matches), a moment
  // after typing stops; a dry run saves nothing. It runs again when the texts or the enforcement change.
  // biome-ignore lint/correctness/useExhaustiveDependencies: what it reads follows from these.
  useEffect(() => {
    if (!schema.ok || !example.ok) {
      setCheck(null);
      return;
    }
    setCheck({ state: 'checking' });
    let cancelled = false;
    const timer = setTimeout(async () => {
      const result = await api.PUT('/api/v1/services/{id}/schema', {
        params: { path: { id: service.id }, query: { dryRun: 'true' } },
        body: body(false),
      });
      if (cancelled) return;
      if (result.response.ok && result.data) setCheck({ state: 'ok', answer: result.data });
      else setCheck({ state: 'problem', problem: (result.error ?? {}) as Problem });
    }, 400);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [schemaText, exampleText, enforcement, service.id]);

  const save = useAction(
    async (acceptBreaking: boolean) => {
      const answer = await ok(
        api.PUT('/api/v1/services/{id}/schema', {
          params: { path: { id: service.id }, query: {} },
          body: body(acceptBreaking),
        }),
      );
      setConfirming(null);
      props.onSaved(
        answer.changed
          ? `Version ${answer.version} saved (${answer.enforcement}).`
          : `Enforcement set to ${answer.enforcement}; the schema is unchanged (version ${answer.version}).`,
      );
      return answer;
    },
    { invalidates: STALE_AFTER.service },
  );

  const submit = () => {
    props.onEdit();
    if (check?.state !== 'ok') return;
    if (check.answer.changed && check.answer.compatibility.breaking) setConfirming(check.answer);
    else void save.run(false);
  };

  const problem = check?.state === 'problem' ? check.problem : undefined;
  const schemaError = !schema.ok
    ? schema.message
    : problem?.code === 'invalid_schema' || problem?.code === 'schema_too_large'
      ? problem.detail
      : undefined;
  const exampleError = !example.ok
    ? example.message
    : problem?.code === 'invalid_example'
      ? (problem.errors ?? []).map((e) => `${e.pointer || '(the message)'}: ${e.message}`).join('; ')
      : undefined;
  const answer = check?.state === 'ok' ? check.answer : undefined;

  return (
    <section className="card" aria-labelledby="schema-editor">
      <h2 id="schema-editor">{current ? `Version ${current.version} in force` : 'No schema yet'}</h2>
      <Field
        label="JSON Schema"
        hint="Draft 2020-12, at most 64 KB; $refs to #/$defs/… only (nothing is fetched)."
        error={schemaError}
      >
        <textarea
          className="code-input"
          value={schemaText}
          rows={16}
          spellCheck={false}
          onChange={(event) => setSchemaText(event.target.value)}
        />
      </Field>
      <Field
        label="Example message"
        hint="Optional: checked against the schema, shown in the Directory."
        error={exampleError}
      >
        <textarea
          className="code-input"
          value={exampleText}
          rows={6}
          spellCheck={false}
          onChange={(event) => setExampleText(event.target.value)}
        />
      </Field>
      <fieldset className="field">
        <legend>Enforcement</legend>
        {(['off', 'warn', 'enforce'] as const).map((mode) => (
          <label key={mode} className="choice">
            <input
              type="radio"
              name="enforcement"
              checked={enforcement === mode}
              onChange={() => setEnforcement(mode)}
            />{' '}
            {ENFORCEMENT_LABELS[mode]}
          </label>
        ))}
      </fieldset>
      <p role="status" className="small">
        {check === null
          ? ''
          : check.state === 'checking'
            ? 'Checking…'
            : check.state === 'problem'
              ? problem?.code === 'invalid_schema' ||
                problem?.code === 'invalid_example' ||
                problem?.code === 'schema_too_large'
                ? 'Fix the problem above to save.'
                : (problem?.detail ?? 'Zekt could not check the schema.')
              : answer?.changed
                ? `The schema is valid. Saving makes version ${answer.version}${answer.compatibility.breaking ? ', a breaking change' : ''}.`
                : 'The schema is valid and unchanged.'}
      </p>
      {answer?.changed && answer.compatibility.changes.length > 0 ? (
        <ChangeList changes={answer.compatibility.changes} title="What saving changes for consumers" />
      ) : null}
      <InlineError error={save.error} />
      <div className="form-actions">
        <button
          type="button"
          className="primary"
          disabled={save.pending || check?.state !== 'ok'}
          onClick={submit}
        >
          {save.pending ? 'Saving…' : 'Save schema'}
        </button>
      </div>
      {confirming ? (
        <Modal
          open
          title={`Save a breaking version ${confirming.version}?`}
          busy={save.pending}
          onClose={() => setConfirming(null)}
          actions={
            <>
              <button
                type="button"
                className="primary"
                disabled={save.pending}
                onClick={() => void save.run(true)}
              >
                {save.pending ? 'Saving…' : 'Save breaking version'}
              </button>
              <button type="button" disabled={save.pending} onClick={() => setConfirming(null)}>
                Cancel
              </button>
            </>
          }
        >
          <p>
            Version {confirming.version} removes or narrows what version{' '}
            {confirming.compatibility.previousVersion} accepted. Consumers’ workflows may rely on it; every
            subscriber gets an alert.
          </p>
          <ChangeList
            changes={confirming.compatibility.changes.filter((c) => c.breaking)}
            title="Breaking changes"
          />
          <InlineError error={save.error} />
        </Modal>
      ) : null}
    </section>
  );
}

function ChangeList({ changes, title }: { changes: Change[]; title: string }) {
  return (
    <div>
      <h3>{title}</h3>
      <ul aria-label={title}>
        {changes.map((change) => (
          <li key={`${change.kind}:${change.pointer}:${change.message}`}>
            <Badge tone={change.breaking ? 'bad' : 'ok'}>{change.breaking ? 'Breaking' : 'Compatible'}</Badge>{' '}
            {change.message} <code className="small">{change.pointer}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}

function VersionHistory({ serviceId, version }: { serviceId: string; version: number }) {
  const versions = useQuery(['services', serviceId, 'schema-versions', version], () =>
    ok(
      api.GET('/api/v1/services/{id}/schema/versions', {
        params: { path: { id: serviceId }, query: { limit: '100' } },
      }),
    ),
  );
  return (
    <section className="card" aria-labelledby="schema-versions">
      <h2 id="schema-versions">Versions</h2>
      <QueryView query={versions} what="the versions">
        {(page) =>
          page.versions.length === 0 ? (
            <p className="muted">No version saved yet.</p>
          ) : (
            <ol reversed aria-label="Schema versions" className="versions">
              {page.versions.map((v, i) => (
                <li key={v.version}>
                  <strong>Version {v.version}</strong> · <Time iso={v.createdAt} /> · {v.createdBy} ·{' '}
                  {v.compatibility.previousVersion === null ? (
                    <Badge tone="neutral">First version</Badge>
                  ) : v.compatibility.breaking ? (
                    <Badge tone="bad">Breaking</Badge>
                  ) : (
                    <Badge tone="ok">Compatible</Badge>
                  )}
                  {page.versions[i + 1] ? (
                    <details>
                      <summary>Changes from version {page.versions[i + 1]!.version}</summary>
                      {v.compatibility.changes.length > 0 ? (
                        <ChangeList
                          changes={v.compatibility.changes}
                          title={`Version ${v.version} against ${page.versions[i + 1]!.version}`}
                        />
                      ) : null}
                      <LineDiff before={page.versions[i + 1]!.schema} after={v.schema} />
                    </details>
                  ) : null}
                </li>
              ))}
            </ol>
          )
        }
      </QueryView>
    </section>
  );
}

/** The two schemas, pretty-printed, line by line: removed lines marked −, added +. */
function LineDiff({ before, after }: { before: unknown; after: unknown }) {
  const a = JSON.stringify(before, null, 2).split('\n');
  const b = JSON.stringify(after, null, 2).split('\n');
  if (a.length * b.length > 4_000_000)
    return <p className="muted small">Too large to compare line by line.</p>;
  // Longest common subsequence of lines, then walked from the start.
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const lines: Array<{ sign: ' ' | '−' | '+'; text: string }> = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push({ sign: ' ', text: a[i]! });
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      lines.push({ sign: '+', text: b[j]! });
      j++;
    } else {
      lines.push({ sign: '−', text: a[i]! });
      i++;
    }
  }
  return (
    <pre className="json diff">
      {lines.map((line, n) => (
        <span
          // biome-ignore lint/suspicious/noArrayIndexKey: lines are positional.
          key={n}
          className={line.sign === '+' ? 'diff-added' : line.sign === '−' ? 'diff-removed' : undefined}
        >
          {line.sign} {line.text}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}
