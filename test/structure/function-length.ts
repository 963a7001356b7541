// The length of every function in a TypeScript source, read with the TypeScript compiler's parser:
// declarations, methods, constructors, accessors, function expressions and arrow functions alike.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface FunctionLength {
  /** The function's name, or `<arrow>` / `<function>` with the name of what it is assigned to. */
  name: string;
  /** 1-based line of the function's start. */
  line: number;
  /** Lines from the first line of the function to the last line of its body, both included. */
  lines: number;
}

function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))) return node.name.text;
  const p = node.parent;
  if (ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) return p.name.text;
  if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.name)) return p.name.text;
  return ts.isArrowFunction(node) ? '<arrow>' : '<function>';
}

/** Every function with a body in a source, with its length in lines. */
export function functionLengths(source: string, fileName = 'module.ts'): FunctionLength[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const first = file.getLineAndCharacterOfPosition(fn.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(fn.body!.getEnd()).line;
      out.push({ name: nameOf(fn), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

/** Every .ts file under a directory (declaration files left out). */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** The functions of src/ longer than `max` lines, as `file:line name (n lines)`. */
export function longFunctions(root: string, max: number): string[] {
  return sourceFiles(path.join(root, 'src')).flatMap((f) =>
    functionLengths(readFileSync(f, 'utf8'), f)
      .filter((x) => x.lines > max)
      .map((x) => `${path.relative(root, f)}:${x.line} ${x.name} (${x.lines} lines)`),
  );
}
