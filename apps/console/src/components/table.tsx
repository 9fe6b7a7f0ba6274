import type { Key, ReactNode } from 'react';
import type { Query } from '../hooks/use-query';
import { TableWrap } from './page';
import { QueryView } from './states';

export interface Column<R> {
  /** The column's header cell: its name (a screen-reader-only one for a column of buttons). */
  header: ReactNode;
  /** The row's cell of this column; omitted when the table's `cells` renders the row. */
  cell?: (row: R) => ReactNode;
  /** This column names the row: its cells are `<th scope="row">`. */
  rowHeader?: boolean;
  /** On the column's cells (e.g. `number`). */
  className?: string;
  /** The header's tooltip: what the column counts, when its name is short. */
  title?: string;
}

export interface TableProps<R> {
  /** The table's accessible name. */
  label: string;
  /** The scrolling region's name, when it is not the table's. */
  region?: string;
  className?: string;
  /** Without columns there is no header row (a table of named values). */
  columns?: Column<R>[];
  rows: R[];
  rowKey: (row: R) => Key;
  rowClassName?: (row: R) => string | undefined;
  /**
   * A row whose cells share state (a confirmation dialog, a pending action) is a component that
   * renders its cells; the table puts them in the row.
   */
  cells?: (row: R) => ReactNode;
  /** Shown instead of the table when there are no rows. */
  empty?: ReactNode;
}

/**
 * The console's tables: a keyboard-scrollable region, a named table, a header row of `col`
 * headers, and each row's cells (the naming column as `row` headers); its empty state in place
 * of an empty table.
 */
export function Table<R>(props: TableProps<R>) {
  const { columns = [] } = props;
  if (props.rows.length === 0 && props.empty !== undefined) return <>{props.empty}</>;
  return (
    <TableWrap label={props.region ?? props.label}>
      <table aria-label={props.label} className={props.className}>
        {columns.length > 0 ? (
          <thead>
            <tr>
              {columns.map((column, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: columns are fixed per table.
                <th key={index} scope="col" title={column.title}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
        ) : null}
        <tbody>
          {props.rows.map((row) => (
            <tr key={props.rowKey(row)} className={props.rowClassName?.(row)}>
              {props.cells
                ? props.cells(row)
                : columns.map((column, index) =>
                    column.rowHeader ? (
                      // biome-ignore lint/suspicious/noArrayIndexKey: columns are fixed per table.
                      <th key={index} scope="row" className={column.className}>
                        {column.cell?.(row)}
                      </th>
                    ) : (
                      // biome-ignore lint/suspicious/noArrayIndexKey: columns are fixed per table.
                      <td key={index} className={column.className}>
                        {column.cell?.(row)}
                      </td>
                    ),
                  )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** Columns that only name themselves, for a table whose `cells` renders each row. */
export function headers<R>(...names: ReactNode[]): Column<R>[] {
  return names.map((header) => ({ header }));
}

/** A table of what a query loads: loading, then its failure (with Retry), its empty state or its rows. */
export function QueryTable<T, R>(
  props: Omit<TableProps<R>, 'rows'> & { query: Query<T>; what: string; rows: (data: T) => R[] },
) {
  const { query, what, rows, ...table } = props;
  return (
    <QueryView query={query} what={what}>
      {(data) => <Table {...table} rows={rows(data)} />}
    </QueryView>
  );
}
