// A small reader of our Dockerfile: stages with their instructions (comments dropped, continued lines
// joined), so tests can check the image's layout and run its commands outside a container.
import { readFileSync } from 'node:fs';

export interface Instruction {
  op: string;
  args: string;
}

export interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

export function readDockerfile(path: string): Stage[] {
  const logical: string[] = [];
  let current = '';
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && current === '')) continue;
    if (line.endsWith('\\')) {
      current += line.slice(0, -1) + ' ';
      continue;
    }
    current += line;
    if (current.trim()) logical.push(current.trim());
    current = '';
  }
  const stages: Stage[] = [];
  for (const l of logical) {
    const [, op, args] = /^(\S+)\s*(.*)$/.exec(l)!;
    if (op.toUpperCase() === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)!;
      stages.push({ name: m[2] ?? String(stages.length), from: m[1], instructions: [] });
    } else stages.at(-1)!.instructions.push({ op: op.toUpperCase(), args });
  }
  return stages;
}

/** The stage and the stages it is built FROM, outermost last: what an instruction inherits. */
export function lineage(stages: Stage[], name: string): Stage[] {
  const out: Stage[] = [];
  for (let s = stages.find((x) => x.name === name); s; s = stages.find((x) => x.name === s!.from)) out.push(s);
  return out;
}

/** The last value of an instruction in a stage, inherited from its parents (ENTRYPOINT, CMD, USER, HEALTHCHECK). */
export function effective(stages: Stage[], name: string, op: string): string | undefined {
  for (const s of lineage(stages, name)) {
    const found = s.instructions.filter((i) => i.op === op).at(-1);
    if (found) return found.args;
  }
  return undefined;
}

/** ENV of a stage with its parents' (KEY=value pairs, the stage's own win). */
export function env(stages: Stage[], name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of lineage(stages, name).reverse()) {
    for (const i of s.instructions.filter((x) => x.op === 'ENV')) {
      for (const m of i.args.matchAll(/(\w+)=("[^"]*"|\S+)/g)) out[m[1]] = m[2].replace(/^"|"$/g, '');
    }
  }
  return out;
}

/** The exec form ["a", "b"] of ENTRYPOINT, CMD or HEALTHCHECK … CMD. */
export function execForm(args: string): string[] {
  const json = args.slice(args.indexOf('['));
  return JSON.parse(json) as string[];
}

/** What a container of the stage runs: its ENTRYPOINT followed by its CMD, both inherited as the image does. */
export function entryCommand(stages: Stage[], name: string): string[] {
  return [...execForm(effective(stages, name, 'ENTRYPOINT')!), ...execForm(effective(stages, name, 'CMD')!)];
}
