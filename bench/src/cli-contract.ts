import type { BenchWorkspace } from '@zekt/server/dist/cli/bench-workspace.js';
import type * as bench from './index.js';

// The server's CLI loads this workspace by name, without its types (the workspaces would build in a
// circle): this line is where a change on either side fails the typecheck.
export type CliContract = typeof bench extends BenchWorkspace ? true : never;
const fits: CliContract = true;
void fits;
