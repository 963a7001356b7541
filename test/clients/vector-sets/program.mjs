// A program written for Redis 8 vector sets with node-redis' own vector-set commands (vAdd with REDUCE
// and Q8, vSim with an arithmetic FILTER, vEmbRaw, vLinks, vInfo), unchanged whatever it talks to.
// Usage: node program.mjs <port> <2|3>; prints one line per call. test/clients/vector-sets.test.ts runs
// it against the dev stack's vector side port and compares with its output against Redis 8.8.0.
import { createClient, RESP_TYPES } from 'redis';

const [port, resp] = process.argv.slice(2).map(Number);
const client = createClient({ socket: { host: '127.0.0.1', port }, RESP: resp });
await client.connect();
const bytes = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
const print = (label, value) => console.log(`${label} ${JSON.stringify(value)}`);

// Eight-dimensional embeddings, reduced to four dimensions by random projection, stored as int8.
const MOVIES = [
  ['m1', [0.9, 0.1, 0.3, 0.7, 0.2, 0.8, 0.1, 0.4], { title: 'Arrival', year: 2016, rating: 7.9 }],
  ['m2', [0.8, 0.2, 0.4, 0.6, 0.1, 0.9, 0.2, 0.3], { title: 'Contact', year: 1997, rating: 7.5 }],
  ['m3', [0.1, 0.9, 0.8, 0.2, 0.7, 0.1, 0.6, 0.2], { title: 'Heat', year: 1995, rating: 8.3 }],
  ['m4', [0.2, 0.8, 0.9, 0.1, 0.6, 0.3, 0.7, 0.1], { title: 'Ronin', year: 1998, rating: 7.2 }],
  ['m5', [0.7, 0.3, 0.2, 0.8, 0.3, 0.7, 0.2, 0.5], { title: 'Interstellar', year: 2014, rating: 8.7 }],
  ['m6', [0.5, 0.5, 0.5, 0.5, 0.4, 0.6, 0.4, 0.6], { title: 'Gattaca', year: 1997, rating: 7.8 }],
];
const query = [0.85, 0.15, 0.3, 0.7, 0.15, 0.85, 0.1, 0.4];

try {
  await client.del('movies');
  for (const [id, vector, attrs] of MOVIES)
    print(`vAdd ${id}`, await client.vAdd('movies', vector, id, { REDUCE: 4, QUANT: 'Q8', SETATTR: attrs }));
  print('vAdd again', await client.vAdd('movies', MOVIES[0][1], 'm1', { REDUCE: 4, QUANT: 'Q8' }));
  print('vCard', await client.vCard('movies'));
  print('vDim', await client.vDim('movies'));
  const info = await client.vInfo('movies');
  const get = (k) => (info instanceof Map ? info.get(k) : info[k]);
  print(
    'vInfo',
    ['quant-type', 'hnsw-m', 'vector-dim', 'projection-input-dim', 'size', 'attributes-count'].map((k) => [k, String(get(k))]),
  );
  print('vSim', await client.vSim('movies', query, { COUNT: 3 }));
  print('vSim FILTER arithmetic', await client.vSim('movies', query, { FILTER: '.rating * 10 % 10 >= 5 and .year - 1990 < 20' }));
  print('vSim FILTER in', await client.vSim('movies', query, { FILTER: '"ar" in .title or .year in [1995, 1998]' }));
  print('vSimWithScores', await client.vSimWithScores('movies', query, { COUNT: 2, FILTER: '(.year / 1000) ** 2 > 4' }));
  print('vSim ELE', await client.vSim('movies', 'm3', { COUNT: 3 }));
  print('vEmb', await client.vEmb('movies', 'm1'));
  const raw = await bytes.vEmbRaw('movies', 'm1');
  print('vEmbRaw', { ...raw, quantization: String(raw.quantization), raw: raw.raw.toString('hex') });
  // The graph's levels are random in Redis; level 0 (the last) of a small set links every other element.
  const level0 = (levels) => levels.at(-1);
  print(
    'vLinks level 0',
    level0(await client.vLinks('movies', 'm1'))
      .map(String)
      .sort(),
  );
  const scored = level0(await client.vLinksWithScores('movies', 'm1'));
  print('vLinksWithScores level 0', Object.entries(scored).sort());
  print('vGetAttr', await client.vGetAttr('movies', 'm2'));
  print('vRem', await client.vRem('movies', 'm6'));
  print('vRange', await client.vRange('movies', '-', '+'));
} finally {
  await client.del('movies');
  await client.quit();
}
