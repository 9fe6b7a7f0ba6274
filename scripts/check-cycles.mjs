#!/usr/bin/env node
// Fails when a module of apps/server/src or packages/*/src reaches itself through its imports.
// Type-only imports count: a cycle of types still couples the modules and breaks narrow rebuilds.
// Relative specifiers only; the workspaces import each other through their built packages, which
// npm keeps acyclic on its own.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const packagesDir = join(root, 'packages');
const sourceRoots = [
  join(root, 'apps/server/src'),
  ...readdirSync(packagesDir)
    .map((name) => join(packagesDir, name, 'src'))
    .filter((dir) => existsSync(dir)),
];

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function resolveImport(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    `${base}.ts`,
    `${base}.tsx`,
    join(base, 'index.ts'),
  ];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile());
}

const graph = new Map();
for (const file of sourceRoots.flatMap(sourceFiles)) {
  // preProcessFile lists every import, export-from and dynamic import, type-only ones included.
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const targets = importedFiles.map((ref) => resolveImport(file, ref.fileName)).filter(Boolean);
  graph.set(file, [...new Set(targets)]);
}

// Tarjan's strongly connected components: each component of more than one module (or a module
// importing itself) is a cycle; one path through it is printed so the fix has a place to start.
let index = 0;
const stack = [];
const state = new Map();
const components = [];
function connect(node) {
  state.set(node, { index, low: index, onStack: true });
  index++;
  stack.push(node);
  for (const next of graph.get(node) ?? []) {
    if (!state.has(next)) {
      connect(next);
      state.get(node).low = Math.min(state.get(node).low, state.get(next).low);
    } else if (state.get(next).onStack) {
      state.get(node).low = Math.min(state.get(node).low, state.get(next).index);
    }
  }
  if (state.get(node).low === state.get(node).index) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      state.get(member).onStack = false;
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component);
  }
}
for (const node of graph.keys()) if (!state.has(node)) connect(node);

function cycleThrough(component) {
  const members = new Set(component);
  const start = [...component].sort()[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of graph.get(node) ?? []) {
      if (next === start) {
        const path = [];
        for (let step = node; step !== null; step = previous.get(step)) path.unshift(step);
        return [...path, start];
      }
      if (members.has(next) && !previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

if (components.length === 0) {
  console.log(`check-cycles: no import cycles among ${graph.size} modules`);
  process.exit(0);
}
for (const component of components) {
  const path = cycleThrough(component).map((file) => relative(root, file));
  const others = component
    .map((file) => relative(root, file))
    .filter((file) => !path.includes(file))
    .sort();
  console.error(`import cycle (${component.length} modules):\n  ${path.join('\n  → ')}`);
  if (others.length > 0) console.error(`  also in it: ${others.join(', ')}`);
}
console.error(
  `\ncheck-cycles: ${components.length} cycle(s). Move the shared type or helper into a leaf module both sides import.`,
);
process.exit(1);
