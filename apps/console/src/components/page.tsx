import { type ReactNode, useEffect, useRef } from 'react';
import { formatClock } from '../format';
import { cameByNavigation } from '../router';

/**
 * A view's frame: its title (which takes the focus after an in-console navigation, so screen
 * readers announce the new page), what it is for, its actions, and when live data was updated.
 */
export function Page(props: {
  title: string;
  intro?: ReactNode;
  actions?: ReactNode;
  updatedAt?: Date | undefined;
  children: ReactNode;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · Zekt`;
    if (cameByNavigation()) heading.current?.focus();
  }, [props.title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <div className="page-head">
        <h1 id="page-title" ref={heading} tabIndex={-1}>
          {props.title}
        </h1>
        {props.actions ? <div className="page-actions">{props.actions}</div> : null}
      </div>
      {props.intro ? <p className="intro">{props.intro}</p> : null}
      {props.updatedAt ? (
        <p className="updated muted" aria-live="off">
          Live · updated {formatClock(props.updatedAt)}
        </p>
      ) : null}
      {props.children}
    </section>
  );
}

/** A horizontally scrollable table that keyboard users can scroll too. */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (WCAG 2.1.1).
    <section className="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
