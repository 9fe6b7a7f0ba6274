/**
 * The code a schema-check thread runs (contracts/schema-check-pool.ts), CommonJS evaluated in the
 * worker: the thread needs no file of its own, so the same code runs from the build and from the
 * sources under test (as store/engine/wal-checkpointer.ts does). It does the Ajv work and nothing else;
 * what its answers mean (pointers, messages) is worked out on the main thread
 * (contracts/schema-errors.ts), where it is typed.
 *
 * - Ajv 2020 with ajv-formats, every error collected (`allErrors`: a provider sees all of them,
 *   the first 20 reported), own properties only.
 * - Every `pattern` and `patternProperties` is compiled by re2js, a linear-time engine (RE2): no
 *   pattern can backtrack, so none can take long whatever the string. Lookarounds and
 *   backreferences, which need backtracking, do not compile: such a schema is refused when saved.
 * - Each schema is compiled in an Ajv instance of its own (`meta: false`), so two versions with
 *   the same `$id` never meet; one shared instance checks schemas against the 2020-12 meta-schema.
 * - Compiled validators are kept by key (service and version: a version never changes) until the
 *   main thread says to forget them; it knows what each thread holds, so it can time a validation
 *   without its compilation.
 *
 * Messages in:  { id, op: 'compile', schemaText, exampleJson?, maxErrors }
 *               { id, op: 'validate', key, schemaText?, payloadJson, maxErrors }
 *               { op: 'forget', keys }
 * Messages out: { id, ok: true, requiresMessage, example: { errors, errorCount } | null }
 *               { id, ok: false, problem: { kind: 'meta' | 'pattern' | 'ref' | 'other', … } }
 *               { id, compiled: true } (a validate job compiled its schema; the answer follows)
 *               { id, errors, errorCount }  (validate)  ·  { id, missing: true } (key not compiled)
 */
export const SCHEMA_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
const load = createRequire(workerData.from);
const Ajv2020 = load('ajv/dist/2020').default;
const addFormats = load('ajv-formats').default;
const { RE2JS } = load('re2js');

let failedPattern = null;
const regExp = (pattern) => {
  try {
    return RE2JS.compile(pattern);
  } catch (error) {
    failedPattern = { pattern, message: String((error && error.message) || error) };
    throw error;
  }
};
const options = { allErrors: true, strict: false, ownProperties: true, code: { regExp } };
const meta = new Ajv2020(options);
addFormats(meta);
// The meta-schema is compiled on first use (~100 ms): before the thread says it is ready, so no
// check is timed with it.
meta.validateSchema({});

function compile(schema) {
  if (!meta.validateSchema(schema)) {
    return { ok: false, problem: { kind: 'meta', errors: (meta.errors || []).map((e) => ({ instancePath: e.instancePath, message: e.message || '' })) } };
  }
  const ajv = new Ajv2020({ ...options, meta: false, validateSchema: false });
  addFormats(ajv);
  failedPattern = null;
  try {
    return { ok: true, validate: ajv.compile(schema) };
  } catch (error) {
    if (failedPattern) return { ok: false, problem: { kind: 'pattern', ...failedPattern } };
    if (error && error.missingRef !== undefined) {
      return { ok: false, problem: { kind: 'ref', ref: String(error.missingRef), message: String(error.message) } };
    }
    return { ok: false, problem: { kind: 'other', message: String((error && error.message) || error) } };
  }
}

function run(validate, data, maxErrors) {
  if (validate(data)) return { errors: [], errorCount: 0 };
  const all = validate.errors || [];
  return {
    errors: all.slice(0, maxErrors).map((e) => ({ instancePath: e.instancePath, keyword: e.keyword, params: e.params, message: e.message || '' })),
    errorCount: all.length,
  };
}

const validators = new Map();
parentPort.on('message', (job) => {
  if (job.op === 'forget') {
    for (const key of job.keys) validators.delete(key);
    return;
  }
  if (job.op === 'compile') {
    const compiled = compile(JSON.parse(job.schemaText));
    if (!compiled.ok) return parentPort.postMessage({ id: job.id, ...compiled });
    const example = job.exampleJson === undefined ? null : run(compiled.validate, JSON.parse(job.exampleJson), job.maxErrors);
    return parentPort.postMessage({ id: job.id, ok: true, requiresMessage: !compiled.validate(null), example });
  }
  let validate = validators.get(job.key);
  if (validate === undefined) {
    if (job.schemaText === undefined) return parentPort.postMessage({ id: job.id, missing: true });
    const compiled = compile(JSON.parse(job.schemaText));
    if (!compiled.ok) return parentPort.postMessage({ id: job.id, invalid: compiled.problem });
    validate = compiled.validate;
    validators.set(job.key, validate);
    // The main thread times the check from here: compiling has a bound of its own.
    parentPort.postMessage({ id: job.id, compiled: true });
  }
  parentPort.postMessage({ id: job.id, ...run(validate, JSON.parse(job.payloadJson), job.maxErrors) });
});
// The thread's id in the kernel, so the main thread can read the CPU time it uses (Linux).
let tid = null;
try {
  tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/task/')[1]) || null;
} catch {}
parentPort.postMessage({ ready: true, tid });
`;
