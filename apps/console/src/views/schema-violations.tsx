import { type Answer, api, ok } from '../api/client';
import { Badge } from '../components/badge';
import { TableWrap } from '../components/page';
import { QueryView } from '../components/states';
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
            <TableWrap label="Schema violations">
              <table aria-label="Schema violations">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Service</th>
                    <th scope="col">Run</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Problems</th>
                  </tr>
                </thead>
                <tbody>
                  {page.violations.map((v) => (
                    <ViolationRow key={v.id} violation={v} />
                  ))}
                </tbody>
              </table>
            </TableWrap>
          </section>
        )
      }
    </QueryView>
  );
}

function ViolationRow({ violation: v }: { violation: Violation }) {
  return (
    <tr>
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
    </tr>
  );
}
