// What `zekt bench` loads from this workspace: the server's CLI parses the options (its usage table
// is the one `zekt --help` prints) and calls these.
export { formatBenchReport } from './bench-report.js';
export { formatCompareReport } from './compare-report.js';
export { runBench } from './run-bench.js';
export { COMPARE_PARTS, runCompare } from './run-compare.js';
