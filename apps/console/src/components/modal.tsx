import { type ReactNode, useEffect, useId, useRef } from 'react';

/**
 * A modal dialog on the native `<dialog>`: the browser keeps the focus inside, Escape closes it, and
 * the focus goes back to what opened it. `busy` keeps it open (Escape included) while a request runs.
 */
export function Modal(props: {
  open: boolean;
  title: string;
  onClose: () => void;
  busy?: boolean;
  children: ReactNode;
  /** The dialog's buttons; a dialog whose body is a form with its own buttons has none here. */
  actions?: ReactNode;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<Element | null>(null);
  const titleId = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (props.open && !element.open) {
      opener.current = document.activeElement;
      element.showModal();
    } else if (!props.open && element.open) {
      element.close();
      if (opener.current instanceof HTMLElement) opener.current.focus();
    }
  }, [props.open]);
  // A dialog removed while open (its view went away) still hands the focus back.
  useEffect(
    () => () => {
      if (dialog.current?.open && opener.current instanceof HTMLElement) opener.current.focus();
    },
    [],
  );
  return (
    <dialog
      ref={dialog}
      className="modal"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (!props.busy) props.onClose();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      <div className="modal-body">{props.children}</div>
      {props.actions ? <div className="modal-actions">{props.actions}</div> : null}
    </dialog>
  );
}
