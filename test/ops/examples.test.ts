// Every shell and code example of README.md and docs/*.md, run against a real dev stack started for
// this file. Examples use the default ports (6379, 8079, 6380, 6381); here the stack runs on free
// ports and the port numbers in the examples are replaced by them. An HTML comment right after a
// block chooses how it is checked; without one, sh/bash blocks run in bash and js/ts blocks run as
// ES modules, and any other block fails this test until it is marked:
//   <!-- example: banner -->          each line is in the dev stack's banner (… matches anything, # comments dropped)
//   <!-- example: redis-cli -->       a redis-cli transcript: each command is run, its output compared
//   <!-- example: vector-config -->   a --vector-config file: the platform's own loader accepts it
//   <!-- example: not run — reason --> not run here, for the reason given (checked to be there)
// Shell blocks get the banner's `export` lines, plus KEY and ID (account key and queue instance id).
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadVectorConfigFile } from '../../src/platform/vector/config.js';
import { trackChild } from '../helpers/cleanup.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

interface Example {
  file: string;
  line: number;
  lang: string;
  code: string;
  mode: string;
}

/** Fenced blocks of a Markdown file, with the mode their marker (or language) gives. */
export function examplesOf(file: string): Example[] {
  const lines = readFileSync(path.join(root, file), 'utf8').split('\n');
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    // The marker follows the fence, after the blank line Prettier puts between them.
    const after = lines[i + 1] === '' ? lines[i + 2] : lines[i + 1];
    const marker = /^<!-- example: (.+?) -->$/.exec(after ?? '');
    const lang = open[1];
    const mode = marker ? marker[1] : ['sh', 'bash'].includes(lang) ? 'shell' : ['js', 'ts'].includes(lang) ? 'module' : 'unmarked';
    out.push({ file, line: start + 1, lang, code: body.join('\n'), mode });
  }
  return out;
}

const files = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const examples = files.flatMap(examplesOf);

let banner = '';
let ports: Record<string, string> = {};
let env: NodeJS.ProcessEnv = {};
let work: string;
let stack: ReturnType<typeof spawn>;

beforeAll(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), 'respgate-examples-'));
  const tiny = path.join(work, 'tiny.json');
  // The vector side-port example needs an index of 3 dimensions (docs/vector-sideport.md says so).
  writeFileSync(
    tiny,
    JSON.stringify({ defaults: true, indexes: [{ name: 'tiny', type: 'DENSE', dimension: 3, similarityFunction: 'COSINE' }] }),
  );
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('RESPGATE_') && !k.startsWith('UPSTASH_') && !k.startsWith('QSTASH_')),
  );
  stack = trackChild(
    spawn(
      'node',
      [
        'bin/respgate',
        'dev',
        '--port',
        '0',
        '--http-port',
        '0',
        '--vector-port',
        '0',
        '--queue-port',
        '0',
        '--vector-config',
        tiny,
        '--vector-index',
        'tiny',
        '--log-level',
        'warn',
      ],
      {
        cwd: root,
        // Throw-away stores: nothing written into the repository (no .respgate-data).
        env: { ...clean, RESPGATE_EPHEMERAL: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );
  let err = '';
  stack.stderr!.on('data', (d) => (err += d));
  await new Promise<void>((resolve, reject) => {
    stack.stdout!.on('data', (d) => {
      banner += d;
      if (banner.includes('Press Ctrl+C')) resolve();
    });
    stack.once('exit', (code) => reject(new Error(`the dev stack exited with ${code}:\n${banner}\n${err}`)));
  });
  const port = (re: RegExp) => re.exec(banner)![1];
  ports = {
    '6379': port(/Redis protocol \(proxy\)\s+redis:\/\/127\.0\.0\.1:(\d+)/),
    '6380': port(/Vector side port[^\n]*redis:\/\/127\.0\.0\.1:(\d+)/),
    '6381': port(/Queue side port[^\n]*redis:\/\/127\.0\.0\.1:(\d+)/),
    '8079': port(/Key-value REST API\s+http:\/\/127\.0\.0\.1:(\d+)/),
  };
  const exported = Object.fromEntries([...banner.matchAll(/export (\w+)=(\S+)/g)].map((m) => [m[1], m[2]]));
  env = {
    ...clean,
    ...exported,
    UPSTASH_VECTOR_REST_TOKEN: exported.UPSTASH_REDIS_REST_TOKEN,
    KEY: /key\s+(\S+)/.exec(banner)![1],
    ID: /queue instance id ([\w-]+)/.exec(banner)![1],
  };
}, 120_000);

afterAll(async () => {
  if (stack && stack.exitCode === null) {
    const exited = new Promise((r) => stack.once('exit', r));
    stack.kill('SIGTERM');
    await exited;
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The example's text with the default ports replaced by the stack's. */
function withPorts(text: string): string {
  return text.replace(/\b(6379|6380|6381|8079)\b/g, (p) => ports[p]);
}

/** A pattern for one expected line: literal text, … matches anything. */
function linePattern(line: string): RegExp {
  return new RegExp(
    '^' +
      line
        .split('…')
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*') +
      '$',
  );
}

async function runRedisCliTranscript(code: string): Promise<void> {
  let port = '';
  const steps: Array<{ command: string; expected: string[] }> = [];
  for (const line of withPorts(code).split('\n')) {
    const start = /^\$ redis-cli -p (\d+)$/.exec(line);
    if (start) port = start[1];
    else if (/^[\d.]+:\d+> /.test(line)) steps.push({ command: line.replace(/^[\d.]+:\d+> /, ''), expected: [] });
    else steps.at(-1)!.expected.push(line);
  }
  for (const step of steps) {
    const child = execFile('redis-cli', ['--no-raw', '-p', port]);
    child.stdin!.end(step.command + '\n');
    const output: string = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`redis-cli exited ${code}`))));
    });
    const got = output.trimEnd().split('\n');
    expect(output, step.command).not.toMatch(/^\(error\)/);
    if (step.expected.length > 0) {
      expect(got.length, `${step.command} → ${output}`).toBe(step.expected.length);
      step.expected.forEach((e, i) => expect(got[i], step.command).toMatch(linePattern(e)));
    }
  }
}

describe('examples in README.md and docs/', () => {
  it('finds the examples, and every block is marked or of a language that runs', () => {
    expect(examples.length).toBeGreaterThan(10);
    for (const e of examples) expect(e.mode, `${e.file}:${e.line} needs an <!-- example: … --> marker`).not.toBe('unmarked');
    for (const e of examples.filter((x) => x.mode.startsWith('not run'))) {
      expect(e.mode, `${e.file}:${e.line}`).toMatch(/^not run — \S.{3,}/);
    }
  });

  for (const e of examples.filter((x) => !x.mode.startsWith('not run'))) {
    it(`${e.file}:${e.line} (${e.mode})`, async () => {
      switch (e.mode) {
        case 'shell': {
          const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', withPorts(e.code)], { cwd: root, env, timeout: 60_000 });
          expect(stdout).not.toMatch(/"error"|^\(error\)|ERR /m);
          return;
        }
        case 'module': {
          const dir = path.join(root, '.tmp');
          mkdirSync(dir, { recursive: true });
          const file = path.join(dir, `example-${path.basename(e.file, '.md')}-${e.line}.${e.lang === 'ts' ? 'ts' : 'mjs'}`);
          writeFileSync(file, withPorts(e.code));
          try {
            const argv = e.lang === 'ts' ? ['node_modules/.bin/tsx', file] : ['node', file];
            await run(argv[0], argv.slice(1), { cwd: root, env, timeout: 60_000 });
          } finally {
            rmSync(file, { force: true });
          }
          return;
        }
        case 'banner': {
          const shown = banner.split('\n').map((l) => l.trim());
          for (const line of withPorts(e.code).split('\n')) {
            const wanted = line.replace(/\s+#.*$/, '').trim();
            if (wanted === '' || wanted === '…') continue;
            expect(
              shown.some((s) => linePattern(wanted).test(s)),
              `banner line: ${wanted}`,
            ).toBe(true);
          }
          return;
        }
        case 'redis-cli':
          return runRedisCliTranscript(e.code);
        case 'vector-config': {
          const file = path.join(work, `config-${e.line}.json`);
          writeFileSync(file, e.code);
          expect(loadVectorConfigFile(file).length).toBeGreaterThan(0);
          return;
        }
        default:
          throw new Error(`${e.file}:${e.line}: unknown example mode '${e.mode}'`);
      }
    });
  }
});
