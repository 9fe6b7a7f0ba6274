import { type Answer, api, ok } from '../api/client';
import { Badge } from '../components/badge';
import { QueryView } from '../components/states';
import { headers, Table } from '../components/table';
import { Time } from '../components/time';
import { useQuery } from '../hooks/use-query';
import { Link } from '../router';

type Violation = Answer<'/api/v1/schema-violations', 'get'>['violations'][number];

/**
 * Provider › Delivery Status: the runs whose message broke a schema in force, per run — accepted in
 * warn mode (delivered all the same), or blocked because an enforced schema requires a message the
 * run did not send. Nothing is shown while there are none.
 */
export function SchemaViolationsCard() {
  const violations = useQuery(
    ['schema-violations'],
    () => ok(api.GET('/api/v1/schema-violations', { params: { query: { limit: '20' } } })),
    { pollMs: 5000 },
  );
  return (
    <QueryView query={violations} what="schema violations">
      {(page) =>
        page.violations.length === 0 ? null : (
          <section className="card" aria-labelledby="schema-violations">
            <h2 id="schema-violations">Schema violations</h2>
            <p className="muted small">
              Runs whose message does not match a schema in force. In warn mode the message was delivered all
              the same; fix it before you enforce the schema. Schemas are edited under{' '}
              <Link to="/provider/services">Services</Link>.
            </p>
            <Table
              label="Schema violations"
              columns={headers('When', 'Service', 'Run', 'Outcome', 'Problems')}
              rows={page.violations}
              rowKey={(v) => v.id}
              cells={(v) => <ViolationCells violation={v} />}
            />
          </section>
        )
      }
    </QueryView>
  );
}

function ViolationCells({ violation: v }: { violation: Violation }) {
  return (
    <>
      <td>
        <Time iso={v.createdAt} />
      </td>
      <td>
        {v.service.slug} <span className="muted small">v{v.schemaVersion}</span>
      </td>
      <td>
        {v.repository} #{v.runId}
        {v.runAttempt > 1 ? ` (attempt ${v.runAttempt})` : ''}
      </td>
      <td>
        {v.outcome === 'blocked' ? (
          <Badge tone="bad">Blocked: no message</Badge>
        ) : v.kind === 'missing_message' ? (
          <Badge tone="warn">Delivered without a message</Badge>
        ) : (
          <Badge tone="warn">Delivered (warn)</Badge>
        )}
      </td>
      <td>
        <ul className="plain">
          {v.errors.map((e) => (
            <li key={`${e.pointer}:${e.message}`}>
              <code>{e.pointer || '(the message)'}</code> {e.message}
            </li>
          ))}
        </ul>
        {v.errorCount > v.errors.length ? (
          <span className="muted small">and {v.errorCount - v.errors.length} more</span>
        ) : null}
      </td>
    </>
  );
}
