import { allPages, api, ok } from '../api/client';
import { Badge } from '../components/badge';
import { Page, TableWrap } from '../components/page';
import { Empty, QueryView } from '../components/states';
import { useQuery } from '../hooks/use-query';
import { Link, useLocation } from '../router';

/** Provider › Services: the services of the user's accounts; create, edit, publish. */
export function ServicesView() {
  const saved = useLocation().query.get('saved');
  const services = useQuery(['services'], () =>
    allPages(async (cursor) => {
      const page = await ok(
        api.GET('/api/v1/services', { params: { query: { limit: '100', ...(cursor ? { cursor } : {}) } } }),
      );
      return { items: page.services, nextCursor: page.nextCursor };
    }),
  );
  return (
    <Page
      title="Services"
      intro="A service is a whitelisted workflow offered to consumers. Published services appear in the Directory."
      actions={
        <Link className="button primary" to="/provider/services/new">
          New service
        </Link>
      }
    >
      {saved ? (
        <p className="notice" role="status">
          Service {saved} saved.
        </p>
      ) : null}
      <QueryView query={services} what="services">
        {(list) =>
          list.length === 0 ? (
            <Empty title="No services yet.">
              Whitelist a workflow in <Link to="/provider/workflows">Zekt Workflows</Link>, then create a
              service from it.
            </Empty>
          ) : (
            <TableWrap label="Services">
              <table aria-label="Services">
                <thead>
                  <tr>
                    <th scope="col">Service</th>
                    <th scope="col">Workflow</th>
                    <th scope="col">Event type</th>
                    <th scope="col">Visibility</th>
                    <th scope="col">Message schema</th>
                    <th scope="col">Directory</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((service) => (
                    <tr key={service.id}>
                      <th scope="row">
                        <Link to={`/provider/services/${service.id}`}>{service.slug}</Link>
                        {service.tags.length > 0 ? (
                          <div className="tags">
                            {service.tags.map((tag) => (
                              <span key={tag} className="tag">
                                {tag}
                              </span>
                            ))}
                          </div>
                        ) : null}
                      </th>
                      <td>
                        {service.repository} · {service.workflow}
                      </td>
                      <td>
                        <code>{service.eventType}</code>
                      </td>
                      <td>{service.visibility === 'public' ? 'Public' : 'Organization'}</td>
                      <td>
                        <Link to={`/provider/services/${service.id}/schema`}>
                          {service.schemaVersion === null
                            ? 'Add a schema'
                            : `Version ${service.schemaVersion} · ${service.enforcement}`}
                          <span className="sr-only"> of {service.slug}</span>
                        </Link>
                      </td>
                      <td>
                        {service.published ? (
                          <Badge tone="ok">Published</Badge>
                        ) : (
                          <Badge tone="neutral">Draft</Badge>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )
        }
      </QueryView>
    </Page>
  );
}
