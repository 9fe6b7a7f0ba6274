import { allPages, api, ok } from '../api/client';
import { Badge } from '../components/badge';
import { Page } from '../components/page';
import { Empty } from '../components/states';
import { QueryTable } from '../components/table';
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
      <QueryTable
        query={services}
        what="services"
        rows={(list) => list}
        rowKey={(service) => service.id}
        label="Services"
        empty={
          <Empty title="No services yet.">
            Whitelist a workflow in <Link to="/provider/workflows">Zekt Workflows</Link>, then create a
            service from it.
          </Empty>
        }
        columns={[
          {
            header: 'Service',
            rowHeader: true,
            cell: (service) => (
              <>
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
              </>
            ),
          },
          {
            header: 'Workflow',
            cell: (service) => (
              <>
                {service.repository} · {service.workflow}
              </>
            ),
          },
          { header: 'Event type', cell: (service) => <code>{service.eventType}</code> },
          {
            header: 'Visibility',
            cell: (service) => (service.visibility === 'public' ? 'Public' : 'Organization'),
          },
          {
            header: 'Message schema',
            cell: (service) => (
              <Link to={`/provider/services/${service.id}/schema`}>
                {service.schemaVersion === null
                  ? 'Add a schema'
                  : `Version ${service.schemaVersion} · ${service.enforcement}`}
                <span className="sr-only"> of {service.slug}</span>
              </Link>
            ),
          },
          {
            header: 'Directory',
            cell: (service) =>
              service.published ? <Badge tone="ok">Published</Badge> : <Badge tone="neutral">Draft</Badge>,
          },
        ]}
      />
    </Page>
  );
}
