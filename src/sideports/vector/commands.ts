// The vector side port's commands as data: Redis 8 vector-set commands (VADD, VSIM, VREM, VCARD, VDIM,
// VEMB, VGETATTR, VSETATTR, VINFO, VRANDMEMBER, VISMEMBER, VRANGE) over one Area C index, the key being
// the namespace ("" = default), plus extensions for what the service has and vector sets lack: text
// (DATA), sparse and hybrid vectors (SPARSE), filters in the service's language (WHERE), a cursor scan
// (VSCAN), fetch by id or prefix (VFETCH), deletes by prefix or filter (VREMBY), DEL and KEYS.
// Arity, flags and arguments drive dispatch, COMMAND INFO/DOCS and HELP (command-spec.ts).
import type { VectorClient } from '../../upstream/vector-client.js';
import type { PortArg, Call, PortCommand, Reply } from '../port-command.js';
import { vemb, vgetattr, vismember, vlinks, vrem, vsetattr } from './element-commands.js';
import { keyspaceView, SetQuants, type VectorContext } from './keyspace.js';
import { IndexRouter, routedClient, type CreateIndex } from './routing.js';
import { del, existsCommand, keys, type } from './keyspace-commands.js';
import { vcard, vdim, vinfo, vremby, vservice } from './set-commands.js';
import { avoidPretenuring } from './gc-policy.js';
import { vaddGroup } from './vadd.js';
import { vsim } from './vsim.js';
import { vfetch, vrandmember, vrange, VRANGE_LIMIT, vscan } from './walk-commands.js';

/** A command spec whose handler takes the context too (bound by vectorCommands). */
type VectorSpec = Omit<PortCommand, 'run' | 'runGroup'> & {
  run?: (ctx: VectorContext, c: Call) => Reply | Promise<Reply>;
  runGroup?: (ctx: VectorContext, calls: Call[]) => Promise<(Reply | Error)[]>;
};

const K: PortArg = { name: 'key', type: 'key' };
const ELEMENT: PortArg = { name: 'element', type: 'string' };
const optional = (name: string, token: string, type: PortArg['type'] = 'pure-token'): PortArg => ({ name, type, token, optional: true });
const oneOf = (name: string, tokens: string[], token?: string): PortArg => ({
  name,
  type: 'oneof',
  ...(token ? { token } : {}),
  optional: true,
  arguments: tokens.map((t) => ({ name: t.toLowerCase(), type: 'pure-token', token: t })),
});

const vectorArg = (withEle: boolean): PortArg => ({
  name: 'vector',
  type: 'oneof',
  arguments: [
    ...(withEle ? [{ name: 'element', type: 'string', token: 'ELE' } as PortArg] : []),
    { name: 'blob', type: 'string', token: 'FP32' },
    {
      name: 'values',
      type: 'block',
      arguments: [
        { name: 'num', type: 'integer', token: 'VALUES' },
        { name: 'value', type: 'double', multiple: true },
      ],
    },
    {
      name: 'sparse',
      type: 'block',
      arguments: [
        { name: 'num', type: 'integer', token: 'SPARSE' },
        {
          name: 'index-value',
          type: 'block',
          multiple: true,
          arguments: [
            { name: 'index', type: 'integer' },
            { name: 'value', type: 'double' },
          ],
        },
      ],
    },
    { name: 'text', type: 'string', token: 'DATA' },
  ],
});

/** Redis 8's own vector-set commands: a module's, so Redis prints them in capitals, flagged `module`, no ACL categories. */
const REDIS_8 = new Set(['vadd', 'vsim', 'vrem', 'vemb', 'vgetattr', 'vsetattr', 'vismember', 'vcard', 'vdim', 'vinfo']);
REDIS_8.add('vrandmember').add('vrange').add('vlinks');

const vs = (s: Omit<VectorSpec, 'group' | 'acl' | 'firstKey' | 'since'> & { write?: boolean }): VectorSpec => ({
  group: 'vector_set',
  since: '8.0.0',
  acl: [s.write ? '@write' : '@read', '@vector'],
  firstKey: 1,
  ...s,
  // As Redis 8 registers them: no ACL categories of their own, the module's key spec.
  ...(REDIS_8.has(s.name) ? { displayName: s.name.toUpperCase(), flags: moduleFlags(s.flags), acl: [] } : {}),
});

/** Redis lists `module` after the command's own flags and before `fast`. */
function moduleFlags(flags: string[]): string[] {
  const own = flags.filter((f) => f !== 'fast');
  return [...own, 'module', ...(flags.includes('fast') ? ['fast'] : [])];
}

const VADD = vs({
  name: 'vadd',
  arity: -5,
  write: true,
  flags: ['write', 'denyoom'],
  summary: 'Adds an element with its vector to a namespace (1 added, 0 updated).',
  runGroup: vaddGroup,
  upstream:
    'POST /fetch (exists?) then /upsert (or /upsert-data for DATA); consecutive VADDs of a connection share one /fetch and one /upsert',
  args: [
    K,
    { name: 'dim', type: 'integer', token: 'REDUCE', optional: true },
    vectorArg(false),
    ELEMENT,
    optional('cas', 'CAS'),
    oneOf('quant', ['NOQUANT', 'Q8', 'BIN']),
    optional('build-exploration-factor', 'EF', 'integer'),
    optional('attributes', 'SETATTR', 'string'),
    optional('numlinks', 'M', 'integer'),
  ],
});

const VSIM = vs({
  name: 'vsim',
  arity: -4,
  flags: ['readonly'],
  summary: 'Returns the elements most similar to a vector, an element or a text.',
  run: vsim,
  upstream: 'POST /query (or /query-data for DATA; /fetch first for ELE; with the vectors for WITHSCORES or EPSILON)',
  args: [
    K,
    vectorArg(true),
    optional('withscores', 'WITHSCORES'),
    optional('withattribs', 'WITHATTRIBS'),
    optional('withdata', 'WITHDATA'),
    optional('count', 'COUNT', 'integer'),
    optional('epsilon', 'EPSILON', 'double'),
    optional('search-exploration-factor', 'EF', 'integer'),
    optional('expression', 'FILTER', 'string'),
    optional('service-filter', 'WHERE', 'string'),
    optional('max-filtering-effort', 'FILTER-EF', 'integer'),
    optional('truth', 'TRUTH'),
    optional('nothread', 'NOTHREAD'),
    oneOf('querymode', ['HYBRID', 'DENSE', 'SPARSE'], 'QUERYMODE'),
    oneOf('fusion', ['RRF', 'DBSF'], 'FUSION'),
    oneOf('weighting', ['IDF'], 'WEIGHTING'),
  ],
});

const VLINKS = vs({
  name: 'vlinks',
  arity: -3,
  flags: ['readonly', 'fast'],
  summary: "Returns an element's neighbours (one level: its nearest elements, as the service does not expose its graph).",
  upstream: 'POST /fetch {ids, includeVectors} then /query (topK 33; with the vectors for WITHSCORES)',
  run: vlinks,
  args: [K, ELEMENT, optional('withscores', 'WITHSCORES')],
});

const ELEMENT_COMMANDS: VectorSpec[] = [
  vs({
    name: 'vrem',
    arity: 3,
    write: true,
    flags: ['write'],
    summary: 'Removes an element (1 removed, 0 absent).',
    run: vrem,
    upstream: 'POST /delete {ids}',
    args: [K, ELEMENT],
  }),
  vs({
    name: 'vemb',
    arity: -3,
    flags: ['readonly', 'fast'],
    summary: "Returns an element's vector.",
    run: vemb,
    upstream: 'POST /fetch {ids, includeVectors}',
    args: [K, ELEMENT, optional('raw', 'RAW')],
  }),
  vs({
    name: 'vgetattr',
    arity: 3,
    flags: ['readonly', 'fast'],
    summary: "Returns an element's attributes (metadata) as JSON.",
    run: vgetattr,
    upstream: 'POST /fetch {ids, includeMetadata}',
    args: [K, ELEMENT],
  }),
  vs({
    name: 'vsetattr',
    arity: 4,
    write: true,
    flags: ['write', 'fast'],
    summary: 'Replaces an element\'s attributes ("" removes them).',
    run: vsetattr,
    upstream: 'POST /update {id, metadata, metadataUpdateMode: OVERWRITE}',
    args: [K, ELEMENT, { name: 'json', type: 'string' }],
  }),
  vs({
    name: 'vismember',
    arity: 3,
    flags: ['readonly'],
    summary: 'Tells whether an element exists.',
    run: vismember,
    upstream: 'POST /fetch {ids}',
    args: [K, ELEMENT],
  }),
];

const SET_COMMANDS: VectorSpec[] = [
  vs({
    name: 'vremby',
    arity: 4,
    write: true,
    flags: ['write'],
    summary: 'Removes the elements matching an id prefix or a filter; returns how many.',
    run: vremby,
    upstream: 'POST /delete {prefix} or {filter}',
    args: [
      K,
      {
        name: 'what',
        type: 'oneof',
        arguments: [
          { name: 'prefix', type: 'string', token: 'PREFIX' },
          { name: 'expression', type: 'string', token: 'FILTER' },
          { name: 'service-filter', type: 'string', token: 'WHERE' },
        ],
      },
    ],
  }),
  vs({
    name: 'vcard',
    arity: 2,
    flags: ['readonly', 'fast'],
    summary: 'Returns the number of elements in a namespace.',
    run: vcard,
    upstream: 'POST /info (namespaces)',
    args: [K],
  }),
  vs({
    name: 'vdim',
    arity: 2,
    flags: ['readonly', 'fast'],
    summary: "Returns the index's dimension.",
    run: vdim,
    upstream: 'POST /info',
    args: [K],
  }),
  vs({
    name: 'vinfo',
    arity: 2,
    flags: ['readonly', 'fast'],
    summary: 'Returns information about a vector set (namespace), with the fields Redis 8 gives.',
    run: vinfo,
    upstream: 'POST /info, then /range pages with metadata (attributes-count)',
    args: [K],
  }),
  vs({
    name: 'vservice',
    arity: 2,
    flags: ['readonly', 'fast'],
    summary: 'Returns what the vector service says of a namespace and its index (type, similarity, models, sizes).',
    run: vservice,
    upstream: 'POST /info',
    args: [K],
  }),
];

const WALK_COMMANDS: VectorSpec[] = [
  vs({
    name: 'vrandmember',
    arity: -2,
    flags: ['readonly'],
    summary: 'Returns one or more random elements.',
    run: vrandmember,
    upstream: 'POST /random (one), or /range pages (count > 0)',
    args: [K, { name: 'count', type: 'integer', optional: true }],
  }),
  vs({
    name: 'vrange',
    arity: -4,
    flags: ['readonly'],
    summary: 'Returns elements in lexicographical order between two bounds (-, +, [elem, (elem), at most count (all when negative).',
    run: vrange,
    upstream: `POST /range pages over the whole namespace (at most ${VRANGE_LIMIT} elements), sorted here`,
    args: [K, { name: 'start', type: 'string' }, { name: 'end', type: 'string' }, { name: 'count', type: 'integer', optional: true }],
  }),
  vs({
    name: 'vscan',
    arity: -3,
    flags: ['readonly'],
    summary: 'Iterates over the elements of a namespace with a cursor (0 starts and ends).',
    run: vscan,
    upstream: 'POST /range {cursor, limit, prefix}',
    args: [
      K,
      { name: 'cursor', type: 'integer' },
      optional('prefix', 'PREFIX', 'string'),
      optional('count', 'COUNT', 'integer'),
      optional('withattribs', 'WITHATTRIBS'),
      optional('withdata', 'WITHDATA'),
    ],
  }),
  vs({
    name: 'vfetch',
    arity: -4,
    flags: ['readonly'],
    summary: 'Returns records by id (null when absent) or by id prefix (at most 1000).',
    run: vfetch,
    upstream: 'POST /fetch {ids} or {prefix}',
    args: [
      K,
      {
        name: 'what',
        type: 'oneof',
        arguments: [
          {
            name: 'ids',
            type: 'block',
            arguments: [
              { name: 'count', type: 'integer', token: 'IDS' },
              { name: 'id', type: 'string', multiple: true },
            ],
          },
          { name: 'prefix', type: 'string', token: 'PREFIX' },
        ],
      },
      optional('withattribs', 'WITHATTRIBS'),
      optional('withvectors', 'WITHVECTORS'),
      optional('withdata', 'WITHDATA'),
    ],
  }),
];

const KEYSPACE_COMMANDS: VectorSpec[] = [
  {
    name: 'del',
    arity: -2,
    group: 'generic',
    since: '1.0.0',
    flags: ['write'],
    acl: ['@keyspace', '@write'],
    firstKey: 1,
    lastKey: -1,
    summary: 'Deletes namespaces (the default namespace "" is emptied); returns how many existed.',
    run: del,
    upstream: 'POST /delete-namespace/{ns} (or /reset for "")',
    args: [{ name: 'key', type: 'key', multiple: true }],
  },
  {
    name: 'exists',
    arity: -2,
    group: 'generic',
    since: '1.0.0',
    flags: ['readonly', 'fast'],
    acl: ['@keyspace', '@read'],
    firstKey: 1,
    lastKey: -1,
    summary: 'Returns how many of the namespaces exist (have vectors).',
    run: existsCommand,
    upstream: 'POST /info (namespaces)',
    args: [{ name: 'key', type: 'key', multiple: true }],
  },
  {
    name: 'type',
    arity: 2,
    group: 'generic',
    since: '1.0.0',
    flags: ['readonly', 'fast'],
    acl: ['@keyspace', '@read'],
    firstKey: 1,
    summary: 'Returns vectorset for a namespace with vectors, none otherwise.',
    run: type,
    upstream: 'POST /info (namespaces)',
    args: [{ name: 'key', type: 'key' }],
  },
  {
    name: 'keys',
    arity: 2,
    group: 'generic',
    since: '1.0.0',
    flags: ['readonly'],
    acl: ['@keyspace', '@read'],
    summary: 'Returns the namespaces matching a glob-style pattern.',
    run: keys,
    upstream: 'POST /info (namespaces)',
    args: [{ name: 'pattern', type: 'pattern' }],
  },
];

const SPECS: VectorSpec[] = [VADD, VSIM, ...ELEMENT_COMMANDS, ...SET_COMMANDS, VLINKS, ...WALK_COMMANDS, ...KEYSPACE_COMMANDS];

/**
 * The commands of a vector side port in front of one or more indexes (one per dimension; the first is
 * the default). `addHint` names the flag that adds an index, for VADD's error on a new dimension;
 * `createIndex` (the dev stack) makes one instead, and its client joins `clients`.
 */
export function vectorCommands(clients: VectorClient[], addHint = '--vector-index', createIndex?: CreateIndex): PortCommand[] {
  avoidPretenuring();
  const setQuants = new SetQuants();
  const router = new IndexRouter(clients, addHint, undefined, createIndex);
  const ctx: VectorContext = { client: keyspaceView(routedClient(router), (ns) => setQuants.forget(ns)), router, setQuants };
  return SPECS.map(({ run, runGroup, ...spec }) => ({
    ...spec,
    ...(run ? { run: (c: Call) => run(ctx, c) } : {}),
    ...(runGroup ? { runGroup: (calls: Call[]) => runGroup(ctx, calls) } : {}),
  }));
}
