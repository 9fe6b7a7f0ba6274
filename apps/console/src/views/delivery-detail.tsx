import { useState } from 'react';
import { STALE_AFTER } from '../api/changes';
import { type Attempt, api, type Delivery, ok } from '../api/client';
import { DeliveryBadge, NotStartedBadge } from '../components/badge';
import { Modal } from '../components/modal';
import { Page } from '../components/page';
import { ErrorState, InlineError, Loading, QueryView } from '../components/states';
import { Table } from '../components/table';
import { Time } from '../components/time';
import { formatDuration, formatTime, randomKey } from '../format';
import { useAction } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';
import { Link } from '../router';
import { ConsumerRunLink, dispatchState, isNotStarted, notStartedAdvice } from './delivery-status';

/**
 * One delivery on its own URL: what happened to it in time (every attempt with its status,
 * category and duration, GitHub's acceptance, the consumer's confirmation and completion), what it
 * carried, GitHub's answer, and Replay.
 */
export function DeliveryDetailView({ deliveryId }: { deliveryId: string }) {
  const delivery = useQuery(
    ['delivery', deliveryId],
    () => ok(api.GET('/api/v1/deliveries/{deliveryId}', { params: { path: { deliveryId } } })),
    { pollMs: 5_000 },
  );
  return (
    <Page
      title="Delivery"
      updatedAt={delivery.data && !delivery.data.isFinalized ? delivery.updatedAt : undefined}
    >
      <p className="muted small">
        <Link to="/provider/deliveries">Provider › Delivery Status</Link> ·{' '}
        <Link to="/consumer/deliveries">Consumer › Delivery Status</Link>
      </p>
      <QueryView query={delivery} what="the delivery">
        {(d) => (
          <>
            <DeliverySummary delivery={d} />
            <Timeline delivery={d} />
            <AttemptTable attempts={d.attempts ?? []} />
            <Payload deliveryId={d.deliveryId} />
            {d.platformResponse ? (
              <section className="card">
                <h2>GitHub’s answer</h2>
                <p>
                  {d.platformResponse.status} at <Time iso={d.platformResponse.at} />
                </p>
                <Headers headers={d.platformResponse.headers} label="Response headers" />
              </section>
            ) : null}
          </>
        )}
      </QueryView>
    </Page>
  );
}

function DeliverySummary({ delivery: d }: { delivery: Delivery }) {
  const state = dispatchState(d);
  return (
    <section className="card" aria-label="Summary">
      <div className="summary-head">
        <DeliveryBadge status={d.deliveryStatus} />
        {isNotStarted(d) ? <NotStartedBadge /> : null}
        <h2 className="inline">{d.eventType}</h2>
        <code className="muted">{d.deliveryId}</code>
      </div>
      {state ? <p className="state">{state}</p> : null}
      {isNotStarted(d) ? <p className="state">{notStartedAdvice(d)}</p> : null}
      <dl className="facts">
        <dt>Provider run</dt>
        <dd>
          {d.provider.runUrl ? (
            <a href={d.provider.runUrl} rel="noreferrer">
              {d.provider.repository} run {d.correlationId} (attempt {d.provider.runAttempt})
            </a>
          ) : (
            `${d.provider.repository} run ${d.correlationId}`
          )}
          {d.provider.workflow ? <span className="muted"> · {d.provider.workflow}</span> : null}
        </dd>
        <dt>Delivers to</dt>
        <dd>{d.consumer.repository}</dd>
        {d.consumerRun ? (
          <>
            <dt>Consumer run</dt>
            <dd>
              <ConsumerRunLink delivery={d} />
            </dd>
          </>
        ) : null}
        <dt>Mode</dt>
        <dd>{d.durable ? 'Durable' : 'Non-durable (one attempt, not tracked)'}</dd>
        <dt>Dispatched</dt>
        <dd>
          <Time iso={d.dispatchedAt} />
        </dd>
        <dt>Confirmed</dt>
        <dd>
          <Time iso={d.confirmedAt} />
          {d.confirmationAttempts > 1 ? (
            <span className="muted"> ({d.confirmationAttempts} confirmations)</span>
          ) : null}
        </dd>
        <dt>Completed</dt>
        <dd>
          <Time iso={d.completedAt} />
          {d.consumerWorkflowConclusion ? (
            <span className="muted"> · {d.consumerWorkflowConclusion}</span>
          ) : null}
        </dd>
        <dt>Retry</dt>
        <dd>
          {d.retryNumber}{' '}
          <span className="muted">
            {d.dispatch.state === 'accepted'
              ? d.retryNumber === 0
                ? '(GitHub accepted the first attempt)'
                : `(GitHub accepted attempt ${d.retryNumber + 1})`
              : '(failed attempts so far)'}
          </span>
        </dd>
        {d.dispatch.nextAttemptAt ? (
          <>
            <dt>Next attempt</dt>
            <dd>
              <Time iso={d.dispatch.nextAttemptAt} />
            </dd>
          </>
        ) : null}
        {d.failureReason ? (
          <>
            <dt>Failure</dt>
            <dd>{d.failureReason}</dd>
          </>
        ) : null}
        {d.replayOf ? (
          <>
            <dt>Replay of</dt>
            <dd>
              <Link to={`/deliveries/${d.replayOf}`}>{d.replayOf}</Link>
            </dd>
          </>
        ) : null}
        {d.replayedBy ? (
          <>
            <dt>Replayed as</dt>
            <dd>
              <Link to={`/deliveries/${d.replayedBy}`}>{d.replayedBy}</Link>
            </dd>
          </>
        ) : null}
      </dl>
      <Replay delivery={d} />
    </section>
  );
}

/** Replay asks first, sends once (the button is disabled while the request runs), and links the new delivery. */
function Replay({ delivery }: { delivery: Delivery }) {
  const [asking, setAsking] = useState(false);
  const [replayId, setReplayId] = useState<string | null>(null);
  // One key per confirmation: a retried request (a flaky network) returns the same replay.
  const [idempotencyKey, setIdempotencyKey] = useState('');
  const replay = useAction(
    async () => {
      const created = await ok(
        api.POST('/api/replay/{deliveryId}', {
          params: {
            path: { deliveryId: delivery.deliveryId },
            header: { 'idempotency-key': idempotencyKey },
          },
        }),
      );
      setReplayId(created.deliveryId);
      setAsking(false);
      return created;
    },
    { invalidates: STALE_AFTER.delivery },
  );
  return (
    <div className="replay">
      <button
        type="button"
        disabled={replay.pending}
        onClick={() => {
          replay.reset();
          setIdempotencyKey(randomKey());
          setAsking(true);
        }}
      >
        {replay.pending ? 'Replaying…' : 'Replay'}
      </button>
      {replayId ? (
        <p className="notice" role="status">
          Replayed as <Link to={`/deliveries/${replayId}`}>{replayId}</Link>
        </p>
      ) : null}
      {!asking ? <InlineError error={replay.error} /> : null}
      <Modal
        open={asking}
        title="Replay this delivery?"
        busy={replay.pending}
        onClose={() => setAsking(false)}
        actions={
          <>
            <button
              type="button"
              className="primary"
              disabled={replay.pending}
              onClick={() => void replay.run()}
            >
              {replay.pending ? 'Replaying…' : 'Replay'}
            </button>
            <button type="button" disabled={replay.pending} onClick={() => setAsking(false)}>
              Cancel
            </button>
          </>
        }
      >
        <p>
          Zekt sends the archived payload of {delivery.deliveryId} to {delivery.consumer.repository} again, as
          a new delivery marked as a replay (<code>isReplay: true</code>). This delivery stays as it is.
        </p>
        <InlineError error={replay.error} />
      </Modal>
    </div>
  );
}

interface Moment {
  at: string;
  label: string;
  detail: string;
  tone: 'ok' | 'bad' | 'info';
}

/** Everything that happened to the delivery, in order. */
function moments(d: Delivery): Moment[] {
  const list: Moment[] = [
    { at: d.dispatchedAt, label: 'Created', detail: 'routed from the provider run', tone: 'info' },
  ];
  for (const a of d.attempts ?? []) {
    list.push({
      at: a.at,
      label: `Attempt ${a.number}`,
      detail:
        a.outcome === 'accepted'
          ? `GitHub accepted it (${a.status}) in ${formatDuration(a.durationMs)}`
          : `${a.status ?? 'no answer'} · ${a.category ?? 'failed'} after ${formatDuration(a.durationMs)}`,
      tone: a.outcome === 'accepted' ? 'ok' : 'bad',
    });
  }
  if (d.confirmedAt)
    list.push({ at: d.confirmedAt, label: 'Confirmed', detail: 'the consumer workflow started', tone: 'ok' });
  if (d.completedAt)
    list.push({
      at: d.completedAt,
      label: d.deliveryStatus === 'Failed' ? 'Failed' : 'Completed',
      detail: d.consumerWorkflowConclusion
        ? `the consumer workflow ended: ${d.consumerWorkflowConclusion}`
        : (d.failureReason ?? ''),
      tone: d.deliveryStatus === 'Failed' ? 'bad' : 'ok',
    });
  if (d.dispatch.nextAttemptAt)
    list.push({ at: d.dispatch.nextAttemptAt, label: 'Next attempt', detail: 'scheduled', tone: 'info' });
  return list.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

/** The delivery's history as a picture (marks placed by time) and as a list. */
function Timeline({ delivery }: { delivery: Delivery }) {
  const list = moments(delivery);
  const start = Date.parse(list[0]!.at);
  const span = Math.max(1, Date.parse(list[list.length - 1]!.at) - start);
  return (
    <section className="card" aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      <svg
        className="timeline-picture"
        viewBox="0 0 400 16"
        role="img"
        aria-labelledby="timeline-picture-title"
      >
        <title id="timeline-picture-title">{list.map((m) => `${m.label}: ${m.detail}`).join('; ')}</title>
        <line x1="6" y1="8" x2="394" y2="8" className="timeline-axis" />
        {list.map((m) => (
          <circle
            key={`${m.label}-${m.at}`}
            cx={6 + ((Date.parse(m.at) - start) / span) * 388}
            cy="8"
            r="5"
            className={`mark mark-${m.tone}`}
          >
            <title>{`${m.label}: ${m.detail}`}</title>
          </circle>
        ))}
      </svg>
      <ol className="timeline">
        {list.map((m) => (
          <li key={`${m.label}-${m.at}`} className={`moment moment-${m.tone}`}>
            <strong>{m.label}</strong> <span className="muted">{formatTime(m.at)}</span>
            <div>{m.detail}</div>
          </li>
        ))}
      </ol>
    </section>
  );
}

function AttemptTable({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0) return null;
  return (
    <section className="card">
      <h2>Attempts</h2>
      <Table
        label="Attempts"
        rows={attempts}
        rowKey={(a) => a.number}
        columns={[
          { header: '#', className: 'number', cell: (a) => a.number },
          { header: 'At', cell: (a) => <Time iso={a.at} /> },
          { header: 'Outcome', cell: (a) => a.outcome },
          { header: 'Status', cell: (a) => a.status ?? '—' },
          { header: 'Category', cell: (a) => a.category ?? '—' },
          { header: 'Duration', cell: (a) => formatDuration(a.durationMs) },
          {
            header: 'Message',
            className: 'message',
            cell: (a) => (
              <>
                {a.message ?? ''}
                {a.headers && Object.keys(a.headers).length > 0 ? (
                  <details>
                    <summary>Headers</summary>
                    <Headers headers={a.headers} label={`Headers of attempt ${a.number}`} />
                  </details>
                ) : null}
              </>
            ),
          },
        ]}
      />
    </section>
  );
}

function Headers({ headers, label }: { headers: Record<string, string>; label: string }) {
  const entries = Object.entries(headers);
  if (entries.length === 0) return <p className="muted">No headers kept.</p>;
  return (
    <dl className="headers" aria-label={label}>
      {entries.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** What the delivery carried (from the archive): the run and the provider's message. */
function Payload({ deliveryId }: { deliveryId: string }) {
  const payload = useQuery(['delivery', deliveryId, 'payload'], () =>
    ok(api.GET('/api/v1/deliveries/{deliveryId}/payload', { params: { path: { deliveryId } } })),
  );
  return (
    <section className="card">
      <h2>Payload</h2>
      {payload.error?.code === 'archive_expired' ? (
        <p className="muted">{payload.error.detail}</p>
      ) : payload.error ? (
        <ErrorState title="Could not load the payload" error={payload.error} retry={payload.reload} />
      ) : !payload.data ? (
        <Loading what="the payload" />
      ) : (
        <>
          <h3>Message</h3>
          {payload.data.hasMessage ? (
            <pre className="json">{JSON.stringify(payload.data.payload, null, 2)}</pre>
          ) : (
            <p className="muted">The run sent no message: consumers received the event alone.</p>
          )}
          <h3>Event</h3>
          <pre className="json">{JSON.stringify(payload.data.event, null, 2)}</pre>
          <p className="muted small">
            Archived <Time iso={payload.data.archivedAt} />; kept until <Time iso={payload.data.expiresAt} />{' '}
            for replay.
          </p>
        </>
      )}
    </section>
  );
}
