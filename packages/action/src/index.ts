// The bundle's entry point (dist/index.js): the runner starts it with `node`.
import { run } from './main.js';

await run();
