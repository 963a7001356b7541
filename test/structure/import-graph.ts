// The import graph of src/: every static import, re-export and dynamic import of every module,
// resolved to files (relative specifiers) or kept as package names (node:net, undici …).
// Imports are read with the TypeScript compiler's own parser, not a regular expression: a comment or
// a string that looks like code (a `/*` inside `src/commands/*.json`) can then hide no import.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface ImportGraph {
  /** Module path relative to the root (src/proxy/session.ts) → what it imports: module paths or package names. */
  edges: Map<string, string[]>;
}

/** The module a node names, if it imports one: declarations, re-exports, `import x = require()`, `import()`. */
function specifierOf(node: ts.Node): string | undefined {
  let target: ts.Node | undefined;
  if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) target = node.moduleSpecifier;
  else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
    target = node.moduleReference.expression;
  else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) target = node.arguments[0];
  else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) target = node.argument.literal;
  return target && ts.isStringLiteralLike(target) ? target.text : undefined;
}

/** Every specifier a TypeScript source imports, in source order (type-only imports included). */
export function importsOf(source: string, fileName = 'module.ts'): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    const spec = specifierOf(node);
    if (spec !== undefined) out.push(spec);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

export function buildGraph(root: string, dir = 'src'): ImportGraph {
  const edges = new Map<string, string[]>();
  for (const file of walk(path.join(root, dir))) {
    const from = path.relative(root, file);
    const targets = importsOf(readFileSync(file, 'utf8'), file).map((spec) =>
      spec.startsWith('.') ? path.relative(root, path.resolve(path.dirname(file), spec)).replace(/\.js$/, '.ts') : spec,
    );
    edges.set(from, targets);
  }
  return { edges };
}

/** Every cycle of modules (each reported once, starting at its smallest member). */
export function findCycles(edges: Map<string, string[]>): string[][] {
  const cycles = new Map<string, string[]>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!edges.has(next)) continue; // a package
      if (state.get(next) === 'open') {
        const cycle = stack.slice(stack.indexOf(next));
        const start = cycle.indexOf([...cycle].sort()[0]);
        const normal = [...cycle.slice(start), ...cycle.slice(0, start)];
        cycles.set(normal.join(' → '), normal);
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
  return [...cycles.values()];
}

/** Everything a module reaches through its imports (modules and packages), with one path to each. */
export function reachable(edges: Map<string, string[]>, from: string): Map<string, string[]> {
  const paths = new Map<string, string[]>([[from, [from]]]);
  const queue = [from];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of edges.get(node) ?? []) {
      if (paths.has(next)) continue;
      paths.set(next, [...paths.get(node)!, next]);
      if (edges.has(next)) queue.push(next);
    }
  }
  paths.delete(from);
  return paths;
}

export interface RoomRule {
  /** Modules under this folder … */
  room: string;
  /** … never reach (directly or through other modules, the path `via`) a target this matches. */
  forbidden: (target: string, via: string[]) => boolean;
  why: string;
}

/** Room-rule breaches: `module: rule (path)`. */
export function breaches(graph: ImportGraph, rules: RoomRule[]): string[] {
  const out: string[] = [];
  for (const module of graph.edges.keys()) {
    for (const rule of rules) {
      if (!module.startsWith(rule.room)) continue;
      for (const [target, via] of reachable(graph.edges, module)) {
        if (rule.forbidden(target, via)) out.push(`${module}: ${rule.why} (${via.join(' → ')})`);
      }
    }
  }
  return out;
}
