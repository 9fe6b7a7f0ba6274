import { useState } from 'react';
import { STALE_AFTER } from '../api/changes';
import { api, ok, type Subscription } from '../api/client';
import { SubscriptionBadge } from '../components/badge';
import { Field } from '../components/field';
import { Modal } from '../components/modal';
import { Page } from '../components/page';
import { Empty, InlineError } from '../components/states';
import { Switch } from '../components/switch';
import { headers, QueryTable } from '../components/table';
import { formatDate } from '../format';
import { useAction, useInvalidate } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';
import { Link } from '../router';
import { decide, loadSubscriptions } from './subscriptions-data';

/**
 * Consumer › Zekt Subscriptions: each subscribed service with the repository it delivers to, how
 * it is delivered (`repository_dispatch`, or `workflow_dispatch` to one workflow file, with
 * "Change"), when it was subscribed, its status, Remove, and the Durable Delivery switch (the
 * seed's step 4). Durable Delivery needs COMPLETION on for the repository, unless the subscription
 * delivers by `workflow_dispatch` (Zekt then follows the run itself); the API refuses otherwise,
 * and says so here.
 */
export function SubscriptionsView() {
  const subscriptions = useQuery(['subscriptions', 'consumer'], () => loadSubscriptions('consumer'));
  const invalidate = useInvalidate();
  const changed = () => invalidate(...STALE_AFTER.subscription);
  return (
    <Page
      title="Zekt Subscriptions"
      intro="Durable Delivery tracks every delivery to its end (Confirmed, Completed or Failed), retries what GitHub refused, and keeps it replayable. How Zekt learns how the consumer's run went decides what it costs in GitHub API calls: with COMPLETION on, GitHub sends the run's webhooks and Zekt calls nothing; delivered as workflow_dispatch with COMPLETION off, Zekt reads the run itself, one call of your installation's per read (about 5 for a one-minute run, 8 for ten minutes, 11 for an hour). Use it where losing an event costs more than tracking it."
    >
      <QueryTable
        query={subscriptions}
        what="subscriptions"
        rows={(list) => list}
        rowKey={(subscription) => subscription.id}
        label="Subscriptions"
        empty={
          <Empty title="You have no subscriptions yet.">
            Find a service in the <Link to="/directory">Directory</Link> and request access for one of your
            repositories.
          </Empty>
        }
        columns={headers(
          'Service',
          'Delivers to',
          'Subscribed',
          'Status',
          'Delivered as',
          'Durable Delivery',
          <span className="sr-only">Remove</span>,
        )}
        cells={(subscription) => <SubscriptionCells subscription={subscription} onChanged={changed} />}
      />
    </Page>
  );
}

function SubscriptionCells({
  subscription,
  onChanged,
}: {
  subscription: Subscription;
  onChanged: () => Promise<unknown>;
}) {
  const [confirming, setConfirming] = useState(false);
  const remove = useAction(async () => {
    await decide(subscription.id, 'revoke');
    setConfirming(false);
    await onChanged();
  });
  const live = subscription.status === 'requested' || subscription.status === 'approved';
  return (
    <>
      <th scope="row">
        {subscription.service.slug}
        <div className="muted small">
          {subscription.provider.repository} · {subscription.provider.workflow} ·{' '}
          <code>{subscription.service.eventType}</code>
        </div>
      </th>
      <td>
        {subscription.deliversTo}
        {!subscription.completionTracking ? (
          <div className="muted small">
            COMPLETION off
            {subscription.deliveryMode === 'workflow_dispatch' && subscription.durable
              ? ': Zekt reads the runs'
              : ''}
          </div>
        ) : null}
      </td>
      <td>{formatDate(subscription.requestedAt)}</td>
      <td>
        <SubscriptionBadge status={subscription.status} />
      </td>
      <td>
        <DeliveredAs subscription={subscription} onChanged={onChanged} />
      </td>
      <td>
        {subscription.status === 'approved' ? (
          <Switch
            id={`durable-${subscription.id}`}
            label={`Durable Delivery: ${subscription.service.slug} to ${subscription.deliversTo}`}
            checked={subscription.durable}
            onChange={async (durable) => {
              await ok(
                api.PATCH('/api/v1/subscriptions/{id}', {
                  params: { path: { id: subscription.id } },
                  body: { durable },
                }),
              );
              await onChanged();
            }}
          />
        ) : (
          <span className="muted">{subscription.status === 'requested' ? 'after approval' : '—'}</span>
        )}
      </td>
      <td>
        {live ? (
          <button
            type="button"
            className="danger"
            aria-label={`Remove ${subscription.service.slug} from ${subscription.deliversTo}`}
            onClick={() => setConfirming(true)}
          >
            Remove
          </button>
        ) : null}
        <Modal
          open={confirming}
          title={`Remove ${subscription.service.slug} from ${subscription.deliversTo}?`}
          busy={remove.pending}
          onClose={() => setConfirming(false)}
          actions={
            <>
              <button
                type="button"
                className="danger"
                disabled={remove.pending}
                onClick={() => void remove.run()}
              >
                {remove.pending ? 'Removing…' : 'Remove'}
              </button>
              <button type="button" disabled={remove.pending} onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </>
          }
        >
          <p>
            {subscription.deliversTo} stops receiving {subscription.service.slug}’s runs. You can request
            access again from the Directory.
          </p>
          <InlineError error={remove.error} />
        </Modal>
      </td>
    </>
  );
}

/** The "Delivered as" cell: the mode (and workflow), and "Change" for a live subscription. */
function DeliveredAs({
  subscription,
  onChanged,
}: {
  subscription: Subscription;
  onChanged: () => Promise<unknown>;
}) {
  const [editing, setEditing] = useState(false);
  const live = subscription.status === 'requested' || subscription.status === 'approved';
  const target = subscription.workflowDispatch;
  return (
    <>
      <code>{subscription.deliveryMode}</code>
      {target ? (
        <div className="muted small">
          {target.workflow} on {target.ref ?? 'the default branch'}
        </div>
      ) : null}
      {live ? (
        <div>
          <button
            type="button"
            aria-label={`Change how ${subscription.service.slug} is delivered to ${subscription.deliversTo}`}
            onClick={() => setEditing(true)}
          >
            Change
          </button>
        </div>
      ) : null}
      {editing ? (
        <DeliveryModeForm
          subscription={subscription}
          onClose={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            void onChanged();
          }}
        />
      ) : null}
    </>
  );
}

/**
 * How deliveries are sent: `repository_dispatch` (every workflow listening for the event type), or
 * `workflow_dispatch` to one workflow file on a ref. Says what that workflow must declare and the
 * permission the App needs, and shows the API's refusal (a bad file name or ref) at its field.
 */
function DeliveryModeForm(props: { subscription: Subscription; onClose: () => void; onSaved: () => void }) {
  const { subscription } = props;
  const [mode, setMode] = useState(subscription.deliveryMode);
  const [workflow, setWorkflow] = useState(subscription.workflowDispatch?.workflow ?? '');
  const [ref, setRef] = useState(subscription.workflowDispatch?.ref ?? '');
  const [checked, setChecked] = useState<string | undefined>();
  const save = useAction(async () => {
    await ok(
      api.PATCH('/api/v1/subscriptions/{id}', {
        params: { path: { id: subscription.id } },
        body:
          mode === 'workflow_dispatch'
            ? { deliveryMode: mode, workflow: workflow.trim(), ref: ref.trim() === '' ? null : ref.trim() }
            : { deliveryMode: mode },
      }),
    );
    props.onSaved();
  });
  const submit = () => {
    if (mode === 'workflow_dispatch' && workflow.trim() === '') {
      setChecked('Name the workflow file that receives the deliveries, e.g. on-deploy.yml.');
      return;
    }
    setChecked(undefined);
    void save.run();
  };
  const problem = save.error;
  const workflowError = checked ?? (problem?.code === 'invalid_workflow_file' ? problem.detail : undefined);
  const refError = problem?.code === 'invalid_ref' ? problem.detail : undefined;
  const otherError = problem && !workflowError && !refError ? problem : undefined;
  return (
    <Modal
      open
      title={`Delivered as: ${subscription.service.slug} to ${subscription.deliversTo}`}
      busy={save.pending}
      onClose={props.onClose}
      actions={
        <>
          <button type="button" className="primary" disabled={save.pending} onClick={submit}>
            {save.pending ? 'Saving…' : 'Save'}
          </button>
          <button type="button" disabled={save.pending} onClick={props.onClose}>
            Cancel
          </button>
        </>
      }
    >
      <fieldset className="field">
        <legend>How each delivery reaches {subscription.deliversTo}</legend>
        <label className="choice">
          <input
            type="radio"
            name="delivery-mode"
            value="repository_dispatch"
            checked={mode === 'repository_dispatch'}
            onChange={() => setMode('repository_dispatch')}
          />{' '}
          <code>repository_dispatch</code>: every workflow with{' '}
          <code>on: repository_dispatch: types: [{subscription.service.eventType}]</code> runs.
        </label>
        <label className="choice">
          <input
            type="radio"
            name="delivery-mode"
            value="workflow_dispatch"
            checked={mode === 'workflow_dispatch'}
            onChange={() => setMode('workflow_dispatch')}
          />{' '}
          <code>workflow_dispatch</code>: one workflow runs, and Zekt knows its run from the start: Delivery
          Status links to it, and Durable Delivery needs no COMPLETION and no step in the workflow.
        </label>
      </fieldset>
      {mode === 'workflow_dispatch' ? (
        <>
          <Field
            label="Workflow file"
            hint="In .github/workflows of the repository, e.g. on-deploy.yml. It must declare on: workflow_dispatch: inputs: zekt: { required: true, type: string }."
            error={workflowError}
          >
            <input value={workflow} onChange={(event) => setWorkflow(event.target.value)} />
          </Field>
          <Field label="Ref" hint="The branch or tag it runs on; empty: the default branch." error={refError}>
            <input
              value={ref}
              placeholder="default branch"
              onChange={(event) => setRef(event.target.value)}
            />
          </Field>
          <p className="muted small">
            The Zekt App needs the “Actions: read &amp; write” permission on {subscription.deliversTo}. If
            GitHub refuses the dispatch (403), an owner of {subscription.consumer.account} accepts the App’s
            new permissions in the installation’s settings on GitHub (Settings › GitHub Apps › Zekt › Review
            request); diagnostics say so too.
          </p>
        </>
      ) : null}
      <InlineError error={otherError} />
    </Modal>
  );
}
