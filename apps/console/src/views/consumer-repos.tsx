import { useState } from 'react';
import { STALE_AFTER } from '../api/changes';
import { api, ok, type Repository } from '../api/client';
import { Modal } from '../components/modal';
import { Page } from '../components/page';
import { Empty, InlineError } from '../components/states';
import { SwitchButton } from '../components/switch';
import { QueryTable } from '../components/table';
import { useAction } from '../hooks/use-action';
import { Link } from '../router';
import { AccountPicker, useAccount } from '../session';
import { splitName, useRepositories } from './repositories';

/**
 * Consumer › Zekt Repos: the COMPLETION switch (the seed's "Enabling durable delivery", steps 1–3).
 * Switching it on asks first: Zekt places a webhook in the repository, and its calls count against
 * the consumer's GitHub API quota. "Enable Tracking" accepts; the dialog stays until the webhook
 * exists, then the list shows the repository enabled for completion tracking.
 */
export function ConsumerReposView() {
  const account = useAccount();
  const repositories = useRepositories(account);
  const [asking, setAsking] = useState<Repository | null>(null);
  const [turnedOn, setTurnedOn] = useState<string | null>(null);
  const save = useAction(
    async (repository: Repository, enabled: boolean) => {
      await ok(
        api.PUT('/api/v1/repositories/{owner}/{repo}/completion-tracking', {
          params: { path: splitName(repository.fullName) },
          body: { enabled },
        }),
      );
      return true;
    },
    { invalidates: STALE_AFTER.repository },
  );
  const [turningOff, setTurningOff] = useState<number | null>(null);
  const [failedOff, setFailedOff] = useState<number | null>(null);

  const enable = async () => {
    if (!asking) return;
    if (await save.run(asking, true)) {
      setTurnedOn(asking.fullName);
      setAsking(null);
    }
  };

  return (
    <Page
      title="Zekt Repos"
      intro="Turn on COMPLETION for a repository that receives deliveries: Zekt then follows its workflow runs and marks each durable delivery Confirmed and Completed on its own."
      actions={<AccountPicker />}
    >
      {turnedOn ? (
        <p className="notice" role="status">
          {turnedOn} is enabled for completion tracking. Next: switch on Durable Delivery for its
          subscriptions in <Link to="/consumer/subscriptions">Zekt Subscriptions</Link>.
        </p>
      ) : null}
      <QueryTable
        query={repositories}
        what="repositories"
        rows={(list) => list}
        rowKey={(repository) => repository.id}
        label="Consumer repositories"
        region="Repositories"
        empty={
          <Empty title={`No repositories in ${account.login}’s installation.`}>
            Add the repositories that should receive events to the Zekt App’s installation on GitHub.
          </Empty>
        }
        columns={[
          { header: 'Repository', rowHeader: true, cell: (repository) => repository.fullName },
          { header: 'Visibility', cell: (repository) => (repository.private ? 'Private' : 'Public') },
          {
            header: 'COMPLETION',
            cell: (repository) => {
              const on = repository.completionTracking.enabled;
              return (
                <>
                  <SwitchButton
                    label={`COMPLETION: ${repository.fullName}`}
                    checked={on}
                    pending={turningOff === repository.id}
                    disabled={save.pending}
                    text={on ? 'Enabled for completion tracking' : 'Off'}
                    onClick={() => {
                      save.reset();
                      setFailedOff(null);
                      if (on) {
                        setTurningOff(repository.id);
                        void save.run(repository, false).then((done) => {
                          setTurningOff(null);
                          if (!done) setFailedOff(repository.id);
                        });
                      } else {
                        setTurnedOn(null);
                        setAsking(repository);
                      }
                    }}
                  />
                  {failedOff === repository.id ? <InlineError error={save.error} /> : null}
                </>
              );
            },
          },
        ]}
      />
      <Modal
        open={asking !== null}
        title={`Enable completion tracking for ${asking?.fullName ?? ''}?`}
        busy={save.pending}
        onClose={() => {
          setAsking(null);
          save.reset();
        }}
        actions={
          <>
            <button type="button" className="primary" disabled={save.pending} onClick={() => void enable()}>
              {save.pending ? 'Placing the webhook…' : 'Enable Tracking'}
            </button>
            <button
              type="button"
              disabled={save.pending}
              onClick={() => {
                setAsking(null);
                save.reset();
              }}
            >
              Cancel
            </button>
          </>
        }
      >
        <p>
          Zekt will place a webhook in <strong>{asking?.fullName}</strong>. GitHub then sends the repository’s
          workflow runs to Zekt, which marks each durable delivery Confirmed when its workflow starts and
          Completed or Failed when it ends.
        </p>
        <p>
          The webhook’s and Zekt’s calls for this repository count against <strong>{account.login}</strong>’s
          GitHub API quota.
        </p>
        <InlineError error={asking ? save.error : undefined} />
      </Modal>
    </Page>
  );
}
