// The vector side port against Redis 8.8.0: every command of test/fixtures/vector-redis8/cases.ts, sent in
// RESP2 and in RESP3 to the side port in front of the real local platform, compared with the replies a
// real Redis 8.8.0 gave (test/fixtures/vector-redis8/replies.json; where they came from is in its
// `source`; re-record with scripts/record-vector-redis8.ts). Byte for byte unless the case says how
// HNSW's randomness or quantization is allowed for (cases.ts' header). The differences that remain are
// listed below, each with its reason (docs/vector-sideport.md, "Differences from Redis 8 vector sets").
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { matches, RawConnection, type Fixture } from '../fixtures/vector-redis8/diff.js';
import { startTestPlatform } from '../helpers/platform.js';
import { vectorPort } from './harness.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/vector-redis8/replies.json', import.meta.url), 'utf8')) as Fixture;
const bytes = (s: string) => Buffer.from(s, 'latin1');

/** Cases (scenario / command as recorded) whose reply differs from Redis 8, with the reason; see docs. */
const OWN_DOCS =
  "COMMAND DOCS gives the side port's own summaries and arguments (its extensions included, group vector_set for redis-cli's help), not Redis' text";
const NO_OTHER_TYPES = 'the side port has vector sets only (an index namespace per key): no string key to get WRONGTYPE from';
const KNOWN: Record<string, string> = {
  'vsim: VSIM pts ELE p4':
    'int8 near-tie: without WITHSCORES the service ranks by the float32 vectors, Redis by the int8 codes (p1 and p7 swap)',
  'vemb: VEMB vf d': 'a -0 component comes back as 0: the service takes vectors in JSON, where -0 is written 0',
  // The side port's keys are the index's namespaces, vector sets only: no key of another type exists, so
  // SET is an unknown command and what follows acts on a vector set (or a missing key).
  'command-info: COMMAND DOCS VADD': OWN_DOCS,
  'command-info: COMMAND DOCS VCARD': OWN_DOCS,
  'command-info: COMMAND DOCS VRANGE': OWN_DOCS,
  'wrong-type: SET wt x': NO_OTHER_TYPES,
  'wrong-type: VADD wt VALUES 2 1 0 a': NO_OTHER_TYPES,
  'wrong-type: VCARD wt': NO_OTHER_TYPES,
  'wrong-type: VSIM wt VALUES 2 1 0': NO_OTHER_TYPES,
  'wrong-type: VEMB wt a': NO_OTHER_TYPES,
  'wrong-type: TYPE wt': NO_OTHER_TYPES,
};

/** The cases that differed, per protocol (the last test checks KNOWN against them). */
const differed = new Set<string>();

let platform: RunningPlatform;
let port: RunningSideport;

beforeAll(async () => {
  const dims = [2, 3, 4, 8, 20];
  platform = await startTestPlatform({
    vectorIndexes: dims.map((d) => ({ name: `d${d}`, type: 'DENSE', dimension: d, similarityFunction: 'COSINE' })),
  });
  const index = (d: number) => ({ url: `${platform.url}/vector/d${d}`, token: platform.token });
  port = await vectorPort({ ...index(3), more: [index(2), index(4), index(8), index(20)] });
});
afterAll(async () => {
  await port?.stop();
  await platform?.stop();
});

interface Outcome {
  id: string;
  same: boolean;
  identical: boolean;
  redis: string;
  port: string;
}

async function replay(protocol: 2 | 3): Promise<Outcome[]> {
  const c = await RawConnection.open(port.port, protocol);
  const out: Outcome[] = [];
  try {
    for (const s of fixture.scenarios) {
      if (s.keys.length) await c.send([bytes('DEL'), ...s.keys.map(bytes)]);
      for (const k of s.cases) {
        const args = k.args.map(bytes);
        const got = await c.send(args);
        const want = bytes(protocol === 2 ? k.resp2 : k.resp3);
        const withScores = k.args.some((a) => a.toUpperCase() === 'WITHSCORES');
        out.push({
          id: `${s.name}: ${k.args.join(' ')}`,
          same: matches(want, got, k.mode, k.loose, withScores),
          identical: want.equals(got),
          redis: want.toString('latin1'),
          port: got.toString('latin1'),
        });
      }
    }
  } finally {
    c.close();
  }
  return out;
}

describe.each([2, 3] as const)('vector side port vs Redis 8.8.0, RESP%i', (protocol) => {
  it('answers every recorded case as Redis 8 does (allowing for HNSW and quantization where marked)', async () => {
    const outcomes = await replay(protocol);
    const differ = outcomes.filter((o) => !o.same);
    for (const o of differ) differed.add(o.id);
    const unexplained = differ.filter((o) => !(o.id in KNOWN));
    const rate = (outcomes.length - differ.length) / outcomes.length;
    const identical = outcomes.filter((o) => o.identical).length;
    if (differ.length) console.info(differ.map((o) => o.id).join('\n'));
    console.info(
      `RESP${protocol}: ${outcomes.length - differ.length}/${outcomes.length} cases as Redis 8.8.0 (${(100 * rate).toFixed(1)} %), ` +
        `${identical} byte-identical, ${differ.length} different (all listed in KNOWN)`,
    );
    expect(unexplained.map((o) => `${o.id}\n  redis: ${JSON.stringify(o.redis)}\n  port:  ${JSON.stringify(o.port)}`)).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(400);
    expect(rate).toBeGreaterThanOrEqual(0.95);
  });
});

describe('INFO commandstats', () => {
  it('names the vector-set commands as Redis 8 does (cmdstat_VADD: a module command keeps its capitals)', async () => {
    const c = await RawConnection.open(port.port, 2);
    const info = (await c.send([bytes('INFO'), bytes('commandstats')])).toString('latin1');
    c.close();
    expect(info).toMatch(/^cmdstat_VADD:calls=\d+/m);
    expect(info).toMatch(/^cmdstat_VSIM:calls=\d+/m);
  });
});

describe('the fixture', () => {
  it('says where its replies came from; every known difference still differs', () => {
    expect(fixture.source.server).toMatch(/^Redis 8\.8\.0/);
    expect(fixture.source.command).toContain('scripts/record-vector-redis8.ts');
    expect(Object.keys(KNOWN).filter((id) => !differed.has(id))).toEqual([]);
  });
});
