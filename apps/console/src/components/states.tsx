import type { ReactNode } from 'react';
import type { ApiProblem } from '../api/client';
import type { Query } from '../hooks/use-query';

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading muted" role="status">
      Loading {what}…
    </p>
  );
}

/** An empty list says what it would hold and what to do next. */
export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children ? <div className="muted">{children}</div> : null}
    </div>
  );
}

/** A failure: what failed, why (the API's detail and code), and a way to try again. */
export function ErrorState({
  title,
  error,
  retry,
}: {
  title: string;
  error: ApiProblem;
  retry?: () => void;
}) {
  return (
    <div className="error-state" role="alert">
      <p className="error-title">{title}</p>
      <p>
        {error.detail} {error.code !== 'error' ? <code className="code">{error.code}</code> : null}
      </p>
      {retry ? (
        <button type="button" onClick={retry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

/** A problem next to the control it is about. */
export function InlineError({ error, id }: { error: ApiProblem | string | undefined; id?: string }) {
  if (!error) return null;
  return (
    <p className="inline-error" role="alert" id={id}>
      {typeof error === 'string' ? error : error.detail}
    </p>
  );
}

/** Renders a query: loading, then its failure (with Retry) or its data. Stale data stays on refresh. */
export function QueryView<T>({
  query,
  what,
  children,
}: {
  query: Query<T>;
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.data !== undefined) {
    return (
      <>
        {query.error ? (
          <ErrorState title={`Could not refresh ${what}`} error={query.error} retry={query.reload} />
        ) : null}
        {children(query.data)}
      </>
    );
  }
  if (query.error)
    return <ErrorState title={`Could not load ${what}`} error={query.error} retry={query.reload} />;
  return <Loading what={what} />;
}
