import { useState } from 'react';
import { api, ok, type Usage } from '../api/client';
import { BarChart } from '../components/chart';
import { InlineField } from '../components/field';
import { Page } from '../components/page';
import { QueryView } from '../components/states';
import { Table } from '../components/table';
import { counterLabel } from '../format';
import { useQuery } from '../hooks/use-query';

type Account = Usage['usage'][number];
type Counter = keyof Account['counters'];

/** Usage: this month's counters per account (what is charged to whom) and a chart per day. */
export function UsageView() {
  const usage = useQuery(['usage'], () => ok(api.GET('/api/v1/usage')));
  return (
    <Page
      title="Usage"
      intro="Events and messages are counted to the provider, dispatches and confirm/complete calls to the consumer (GitHub counts the dispatch against the consumer’s installation)."
    >
      <QueryView query={usage} what="usage">
        {(data) => (
          <>
            {data.usage.map((account) => (
              <AccountUsage key={account.account} account={account} />
            ))}
          </>
        )}
      </QueryView>
    </Page>
  );
}

function AccountUsage({ account }: { account: Account }) {
  const counters = Object.keys(account.counters) as Counter[];
  const [chosen, setChosen] = useState<Counter>('dispatchApiCalls');
  return (
    <section className="card" aria-labelledby={`usage-${account.account}`}>
      <h2 id={`usage-${account.account}`}>
        {account.account} · {account.month}
      </h2>
      <Table
        label={`Usage of ${account.account}`}
        region={`Counters of ${account.account}`}
        rows={counters}
        rowKey={(name) => name}
        cells={(name) => (
          <>
            <th scope="row">{counterLabel(name)}</th>
            <td className="number">{account.counters[name]}</td>
          </>
        )}
      />
      <InlineField label="Per day">
        <select value={chosen} onChange={(event) => setChosen(event.target.value as Counter)}>
          {counters.map((name) => (
            <option key={name} value={name}>
              {counterLabel(name)}
            </option>
          ))}
        </select>
      </InlineField>
      <BarChart
        title={`${counterLabel(chosen)} per day, ${account.month}`}
        bars={account.days.map((day) => ({
          label: day.day.slice(5),
          value: day.counters[chosen],
          text: `${day.day}: ${day.counters[chosen]}`,
        }))}
      />
    </section>
  );
}
