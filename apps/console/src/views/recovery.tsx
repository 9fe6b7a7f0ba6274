import { type RefObject, useEffect, useRef, useState } from 'react';
import { STALE_AFTER } from '../api/changes';
import { type Answer, api, type Connection, ok } from '../api/client';
import { Badge, type Tone } from '../components/badge';
import { Modal } from '../components/modal';
import { InlineError } from '../components/states';
import { Time } from '../components/time';
import { formatTime, randomKey } from '../format';
import { useAction } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';
import { setQuery, useLocation } from '../router';

type Recovery = Answer<'/api/v1/connections/{id}/recoveries/{recoveryId}', 'get'>;

const STATES: Array<{ value: string; label: string; hint: string }> = [
  { value: 'failed', label: 'Failed', hint: 'GitHub never accepted them, or their workflow failed' },
  {
    value: 'not_started',
    label: 'Not started',
    hint: 'GitHub accepted them but no workflow run started (durable deliveries only)',
  },
];

const STATUS: Record<Recovery['status'], { label: string; tone: Tone }> = {
  running: { label: 'Running', tone: 'info' },
  completed: { label: 'Completed', tone: 'ok' },
  cancelled: { label: 'Cancelled', tone: 'neutral' },
};

/** A progress reading while a job runs: the job is short, so a second between reads. */
const PROGRESS_POLL_MS = 1000;

/** A `datetime-local` value (the user's time zone, to the minute) for a moment. */
function localInput(at: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/**
 * The dialog swaps the form for the progress (and back): the button that was pressed is gone, so the
 * focus would fall to the page. It goes to the part that replaced it instead.
 */
function useFocusWhenLost(ref: RefObject<HTMLElement | null>, ready: boolean): void {
  useEffect(() => {
    const element = ref.current;
    if (!ready || !element) return;
    const dialog = element.closest('dialog');
    const focused = document.activeElement;
    // Lost: on the page, or (Chrome's fix-up for a removed element in a modal) on the dialog itself.
    if (!dialog?.open || (focused !== dialog && dialog.contains(focused))) return;
    const target = element.hasAttribute('tabindex')
      ? element
      : element.querySelector<HTMLElement>('input, button');
    target?.focus();
  }, [ref, ready]);
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Recover: replay every failed or not-started delivery of a connection since a time,
 * as a background job. The user sees how many deliveries it would replay before starting it, then
 * its progress, and can cancel it. The open dialog is in the URL (`?recover=<connection>`), so a
 * reload comes back to a running job's progress.
 */
export function RecoverButton({ connection: c }: { connection: Connection }) {
  const { query } = useLocation();
  const open = query.get('recover') === c.id;
  const name = `${c.service.slug} to ${c.consumer.repository}`;
  return (
    <>
      <button type="button" onClick={() => setQuery({ recover: c.id }, { push: true })}>
        Recover
        <span className="sr-only"> deliveries of {name}</span>
      </button>
      {open ? (
        <RecoverDialog connection={c} name={name} onClose={() => setQuery({ recover: undefined })} />
      ) : null}
    </>
  );
}

function RecoverDialog({
  connection: c,
  name,
  onClose,
}: {
  connection: Connection;
  name: string;
  onClose: () => void;
}) {
  // The job this dialog follows: one started here, or the connection's running one when it opens.
  const [followed, setFollowed] = useState<string | null>(null);
  const [startAnother, setStartAnother] = useState(false);
  const latest = useQuery(['recoveries', c.id], () =>
    ok(
      api.GET('/api/v1/connections/{id}/recoveries', {
        params: { path: { id: c.id }, query: { limit: '1' } },
      }),
    ),
  );
  const running = latest.data?.recoveries.find((r) => r.status === 'running');
  const recoveryId = followed ?? (startAnother ? null : (running?.id ?? null));
  const [busy, setBusy] = useState(false);
  const close = () => {
    if (!busy) onClose();
  };

  return (
    <Modal open title={`Recover deliveries of ${name}`} busy={busy} onClose={close}>
      {!latest.data && !latest.error ? (
        <p className="muted" role="status">
          Loading…
        </p>
      ) : recoveryId ? (
        <Progress
          connectionId={c.id}
          recoveryId={recoveryId}
          onBusy={setBusy}
          onClose={close}
          onAnother={() => {
            setFollowed(null);
            setStartAnother(true);
          }}
        />
      ) : (
        <StartForm
          connection={c}
          onBusy={setBusy}
          onClose={close}
          onStarted={(id) => {
            setStartAnother(false);
            setFollowed(id);
          }}
        />
      )}
      <InlineError error={latest.error} />
    </Modal>
  );
}

function StartForm({
  connection: c,
  onBusy,
  onClose,
  onStarted,
}: {
  connection: Connection;
  onBusy: (busy: boolean) => void;
  onClose: () => void;
  onStarted: (recoveryId: string) => void;
}) {
  const [since, setSince] = useState(() => localInput(new Date(Date.now() - 24 * 3_600_000)));
  const [states, setStates] = useState<string[]>(['failed']);
  // One key per dialog: a retried start (a double click, a flaky network) returns the same job.
  const [idempotencyKey] = useState(randomKey);
  const sinceAt = since ? new Date(since) : null;
  const sinceIso = sinceAt && !Number.isNaN(sinceAt.getTime()) ? sinceAt.toISOString() : null;
  const problem = !sinceIso
    ? 'Give the time from which to recover.'
    : states.length === 0
      ? 'Choose failed, not started or both.'
      : null;

  const preview = useQuery(['recovery-preview', c.id, sinceIso, states], async () =>
    problem || !sinceIso
      ? null
      : ok(
          api.GET('/api/v1/connections/{id}/recoveries/preview', {
            params: { path: { id: c.id }, query: { since: sinceIso, states: states.join(',') } },
          }),
        ),
  );
  const start = useAction(
    async () => {
      if (!sinceIso) return undefined;
      onBusy(true);
      try {
        const created = await ok(
          api.POST('/api/v1/connections/{id}/recoveries', {
            params: { path: { id: c.id }, header: { 'idempotency-key': idempotencyKey } },
            body: { since: sinceIso, states },
          }),
        );
        onStarted(created.id);
        return created;
      } finally {
        onBusy(false);
      }
    },
    { invalidates: STALE_AFTER.recovery },
  );
  const toReplay = preview.data?.toReplay ?? 0;
  const ready = !problem && !preview.loading && !preview.error && toReplay > 0;
  const form = useRef<HTMLFormElement>(null);
  useFocusWhenLost(form, true);
  const toggle = (value: string, on: boolean) =>
    setStates((current) => (on ? [...current, value] : current.filter((s) => s !== value)));

  return (
    <form
      ref={form}
      className="form recover-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (ready) void start.run();
      }}
    >
      <p>
        Zekt replays each delivery of the chosen kind since that time once, as a new delivery paced like any
        other. Deliveries replayed already are skipped.
      </p>
      <fieldset className="field">
        <legend>Which deliveries</legend>
        {STATES.filter((s) => s.value !== 'not_started' || c.durable).map((s) => (
          <label key={s.value} className="choice">
            <input
              type="checkbox"
              checked={states.includes(s.value)}
              onChange={(event) => toggle(s.value, event.target.checked)}
            />{' '}
            {s.label} <span className="muted small">— {s.hint}</span>
          </label>
        ))}
      </fieldset>
      <div className="field">
        <label htmlFor={`recover-since-${c.id}`}>Since</label>
        <input
          id={`recover-since-${c.id}`}
          type="datetime-local"
          value={since}
          aria-describedby={`recover-since-hint-${c.id}`}
          onChange={(event) => setSince(event.target.value)}
        />
        <p className="hint muted" id={`recover-since-hint-${c.id}`}>
          Your time zone; at most 90 days ago (archived payloads are kept 90 days).
        </p>
      </div>
      <div className="preview" role="status" aria-live="polite">
        {problem ? (
          <p className="inline-error">{problem}</p>
        ) : preview.error ? (
          <p className="inline-error">
            {preview.error.detail} <code className="code">{preview.error.code}</code>
          </p>
        ) : preview.data ? (
          <p>
            <strong className="preview-count">
              {plural(toReplay, 'delivery', 'deliveries')} would be replayed
            </strong>
            {preview.data.total !== toReplay
              ? ` (of ${preview.data.total} in the window; ${preview.data.total - toReplay} replayed already)`
              : ''}
            , from {formatTime(preview.data.since)} to now.
          </p>
        ) : (
          <p className="muted">Counting…</p>
        )}
      </div>
      <InlineError error={start.error} />
      <div className="modal-actions">
        <button type="submit" className="primary" disabled={!ready || start.pending}>
          {start.pending
            ? 'Starting…'
            : ready
              ? `Recover ${plural(toReplay, 'delivery', 'deliveries')}`
              : 'Recover'}
        </button>
        <button type="button" disabled={start.pending} onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}

function Progress({
  connectionId,
  recoveryId,
  onBusy,
  onClose,
  onAnother,
}: {
  connectionId: string;
  recoveryId: string;
  onBusy: (busy: boolean) => void;
  onClose: () => void;
  onAnother: () => void;
}) {
  const [cancelled, setCancelled] = useState<Recovery | null>(null);
  const [finished, setFinished] = useState(false);
  const read = useQuery(
    ['recovery', recoveryId],
    () =>
      ok(
        api.GET('/api/v1/connections/{id}/recoveries/{recoveryId}', {
          params: { path: { id: connectionId, recoveryId } },
        }),
      ),
    // Read again while it runs; a finished job does not change.
    finished ? {} : { pollMs: PROGRESS_POLL_MS },
  );
  const readStatus = read.data?.status;
  useEffect(() => {
    if (readStatus && readStatus !== 'running') setFinished(true);
  }, [readStatus]);
  const cancel = useAction(
    async () => {
      onBusy(true);
      try {
        const answer = await ok(
          api.POST('/api/v1/connections/{id}/recoveries/{recoveryId}/cancel', {
            params: { path: { id: connectionId, recoveryId } },
          }),
        );
        setCancelled(answer);
        return answer;
      } finally {
        onBusy(false);
      }
    },
    // Not the connection's list of recoveries: the dialog follows the running job it found there,
    // and would lose it (and this panel) once the job is no longer running.
    { invalidates: [['recovery', recoveryId], ['deliveries'], ['audit']] },
  );
  const panel = useRef<HTMLElement>(null);
  const r = read.data && cancelled && read.data.status === 'running' ? cancelled : (read.data ?? cancelled);
  useFocusWhenLost(panel, r !== null);
  if (!r) {
    return read.error ? (
      <InlineError error={read.error} />
    ) : (
      <p className="muted" role="status">
        Loading the recovery…
      </p>
    );
  }
  const handled = r.replayed + r.skipped;
  const status = STATUS[r.status];
  return (
    <section className="recovery-progress" ref={panel} tabIndex={-1} aria-label="Recovery progress">
      <p>
        <Badge tone={status.tone}>{status.label}</Badge>{' '}
        <span className="muted small">
          {r.id} · deliveries since <Time iso={r.since} /> · started <Time iso={r.createdAt} />
        </span>
      </p>
      <label className="progress-label" htmlFor={`progress-${r.id}`}>
        Progress
      </label>
      <progress id={`progress-${r.id}`} max={Math.max(r.total, 1)} value={r.total === 0 ? 1 : handled} />
      <p role="status" className="progress-text">
        {r.status === 'running'
          ? `${handled} of ${r.total} handled`
          : r.status === 'completed'
            ? `Done: ${handled} of ${r.total} handled`
            : `Cancelled after ${handled} of ${r.total}`}
      </p>
      <dl className="stats">
        <div>
          <dt>Total</dt>
          <dd>{r.total}</dd>
        </div>
        <div>
          <dt>Replayed</dt>
          <dd>{r.replayed}</dd>
        </div>
        <div>
          <dt>Skipped</dt>
          <dd title="Replayed already, archive expired, replay limit reached, or the subscription no longer approved">
            {r.skipped}
          </dd>
        </div>
      </dl>
      {r.status === 'cancelled' ? (
        <p className="small muted">Deliveries it replayed stay replayed; no more are.</p>
      ) : null}
      <InlineError error={cancel.error ?? read.error} />
      <div className="modal-actions">
        {r.status === 'running' ? (
          <button
            type="button"
            className="danger"
            disabled={cancel.pending}
            onClick={() => void cancel.run()}
          >
            {cancel.pending ? 'Cancelling…' : 'Cancel recovery'}
          </button>
        ) : (
          <button type="button" onClick={onAnother}>
            New recovery
          </button>
        )}
        <button type="button" disabled={cancel.pending} onClick={onClose}>
          Close
        </button>
      </div>
    </section>
  );
}
