/**
 * The layer rules of the code, checked by `npm run lint` (dependency-cruiser). Each rule says why it
 * exists; docs/architecture.md draws the layers. Test code (`*.test.ts`, test support) may reach
 * anywhere: it drives the product from outside.
 */
const server = '^apps/server/src/';
const testCode = ['\\.test\\.tsx?$', '/test/', '\\.contract\\.ts$'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment:
        'A module must not reach itself through its imports (type-only imports included: a cycle of types still couples the modules). Move the shared type or helper into a leaf module both sides import.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'domain/ holds the rules (states, routing, health, retries, diagnostics) as pure functions: no framework, no I/O, nothing outside domain/ but node:crypto. Pass what a rule needs as arguments; do the I/O in the adapter that calls it.',
      from: { path: `${server}domain/`, pathNot: testCode },
      to: {
        pathNot: [`${server}domain/`, '^node:crypto$', '^crypto$'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'domain-types-stay-in-domain',
      severity: 'error',
      comment:
        'Even the types domain/ uses are its own: an adapter type in a rule drags the adapter in. Declare the shape in domain/ and let the adapter satisfy it.',
      from: { path: `${server}domain/`, pathNot: testCode },
      to: { path: `${server}(?!domain/)`, dependencyTypes: ['type-only'] },
    },
    {
      name: 'nothing-imports-cli',
      severity: 'error',
      comment:
        'cli/ is the outermost layer (argument parsing, printing, process exit codes). What another layer needs from it belongs in the layer that owns it.',
      from: { path: server, pathNot: [`${server}cli/`, ...testCode] },
      to: { path: `${server}cli/` },
    },
    {
      name: 'http-uses-store-operations',
      severity: 'error',
      comment:
        'The HTTP layer calls the store through its operations (store/*.ts) and the Store it is given, never the engine underneath (drivers, group commit, compiled or prepared statements, migrations).',
      from: { path: `${server}http/`, pathNot: testCode },
      to: {
        path: `${server}store/(engine/|migrations/|group-commit|compiled-query|prepared-statements|direct-run|dialect|classified-dialect|sqlite|postgres|wal-checkpointer)`,
      },
    },
    {
      name: 'product-imports-no-test-code',
      severity: 'error',
      comment: 'The product never imports test support or tests: they are not shipped.',
      from: { path: '^(apps|packages)/[^/]+/src/', pathNot: testCode },
      to: { path: testCode },
    },
    {
      name: 'console-components-are-generic',
      severity: 'error',
      comment:
        "The console's components/ are the shared building blocks of every view: a component that imports a view is a view.",
      from: { path: '^apps/console/src/components/' },
      to: { path: '^apps/console/src/views/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['/dist/', '\\.d\\.ts$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
