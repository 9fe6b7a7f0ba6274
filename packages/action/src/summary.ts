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

/** @example escapeHtml('<b>') // '&lt;b&gt;' */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}
