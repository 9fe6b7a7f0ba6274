import { cloneElement, type ReactElement, useId } from 'react';

/**
 * A labelled form control with its hint and its problem (the form's own check, or the API's
 * `detail` for the field it is about), wired with aria-describedby and aria-invalid.
 */
export function Field(props: {
  label: string;
  hint?: string;
  error?: string | undefined;
  children: ReactElement<Record<string, unknown>>;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const described = [props.hint ? hintId : null, props.error ? errorId : null].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {cloneElement(props.children, {
        id,
        'aria-invalid': props.error ? true : undefined,
        'aria-describedby': described || undefined,
      })}
      {props.hint ? (
        <p className="hint muted" id={hintId}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p className="inline-error" id={errorId} role="alert">
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/** A label and its control side by side (filters, pickers), linked by id so the name is the label alone. */
export function InlineField(props: { label: string; children: ReactElement<Record<string, unknown>> }) {
  const id = useId();
  return (
    <span className="inline-field">
      <label htmlFor={id}>{props.label}</label>
      {cloneElement(props.children, { id })}
    </span>
  );
}
