import * as core from '@actions/core';

/**
 * Adds a heading and a two-column table to the job summary (`GITHUB_STEP_SUMMARY`). Cells are
 * HTML-escaped (core.summary inserts them as they are, and a service's detail may contain `<`).
 * Outside a runner there is no summary file: nothing is written. A summary that cannot be written
 * is a warning, never the step's failure.
 */
export async function writeSummary(title: string, rows: Array<[string, string]>): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  try {
    await core.summary
      .addHeading(escapeHtml(title), 3)
      .addTable(rows.map(([name, value]) => [{ data: escapeHtml(name), header: true }, escapeHtml(value)]))
      .write();
  } catch (error) {
    core.warning(`could not write the job summary: ${(error as Error).message}`);
  }
}

/**
 * A heading and a table with a header row (one row per item), and a closing line; the cells are
 * escaped as in writeSummary.
 */
export async function writeTable(
  title: string,
  header: string[],
  rows: string[][],
  note: string,
): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  try {
    await core.summary
      .addHeading(escapeHtml(title), 3)
      .addTable([
        header.map((name) => ({ data: escapeHtml(name), header: true })),
        ...rows.map((row) => row.map((cell) => escapeHtml(cell))),
      ])
      .addRaw(
        `<p>${escapeHtml(`${note}Check a message before pushing: zekt schema check <service> <file>`)}</p>`,
        true,
      )
      .write();
  } catch (error) {
    core.warning(`could not write the job summary: ${(error as Error).message}`);
  }
}

/** @example escapeHtml('<b>') // '&lt;b&gt;' */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}
