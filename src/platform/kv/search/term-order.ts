// The order of $terms buckets whose counts tie. The service's engine (Tantivy) puts the buckets in a
// hash map (rustc-hash's FxHasher, hashbrown's table) in ascending key order, iterates it, and sorts by count
// with a sort that keeps the order of equal counts for short lists: ties come out in the map's slot order.
// The SDK's tests expect exactly that order (`{ key: 2 }, { key: 0 }, { key: 1 }` for keys 0, 1, 2), so it
// is reproduced here for numeric and boolean keys; text keys keep ascending order.
const MASK = (1n << 64n) - 1n;
const K = 0xf1357aea2e62a9c5n;
const GROUP = 16;

/** rustc-hash 2's FxHasher over 64-bit words, then `finish` (rotate left 26). */
function fxHash(words: bigint[]): bigint {
  let h = 0n;
  for (const w of words) h = ((h + w) * K) & MASK;
  return ((h << 26n) | (h >> 38n)) & MASK;
}

function f64Bits(v: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v, true);
  return view.getBigUint64(0, true);
}

/** The hash of Tantivy's IntermediateKey for a key of this field type (discriminant, then the value). */
export function keyHash(type: string, key: number | boolean): bigint | undefined {
  if (typeof key === 'boolean') return fxHash([1n, key ? 1n : 0n]);
  if (type === 'F64') return fxHash([3n, f64Bits(key)]);
  if (type === 'I64') return fxHash([4n, BigInt.asUintN(64, BigInt(key))]);
  if (type === 'U64') return fxHash([5n, BigInt(key)]);
  return undefined;
}

/** hashbrown's bucket count for a table reserved for `n` entries. */
function bucketsFor(n: number): number {
  if (n < 4) return 4;
  if (n < 8) return 8;
  let b = 1;
  while (b < Math.ceil((n * 8) / 7)) b *= 2;
  return b;
}

/** The slot each hash takes when inserted in order into a fresh table (SSE2 groups of 16). */
export function slotsOf(hashes: bigint[]): number[] {
  const buckets = bucketsFor(hashes.length);
  const mask = buckets - 1;
  const full = new Array<boolean>(buckets).fill(false);
  return hashes.map((h) => {
    let pos = Number(h & BigInt(mask));
    for (let stride = 0; ;) {
      for (let j = 0; j < GROUP; j++) {
        const at = pos + j;
        // Past the last bucket, small tables see empty padding, large ones a mirror of the first slots.
        if (at >= buckets && buckets < GROUP) {
          const slot = at & mask;
          const chosen = !full[slot] ? slot : full.indexOf(false);
          full[chosen] = true;
          return chosen;
        }
        const slot = at & mask;
        if (!full[slot]) {
          full[slot] = true;
          return slot;
        }
      }
      stride += GROUP;
      pos = (pos + stride) & mask;
    }
  });
}

/** Keys (ascending) in the engine's bucket iteration order; undefined when it is not reproduced. */
export function engineOrder<T extends number | boolean | string>(type: string, keys: T[]): T[] | undefined {
  const hashes: bigint[] = [];
  for (const k of keys) {
    if (typeof k === 'string') return undefined;
    const h = keyHash(type, k);
    if (h === undefined) return undefined;
    hashes.push(h);
  }
  const slots = slotsOf(hashes);
  return keys
    .map((k, i) => ({ k, slot: slots[i] }))
    .sort((a, b) => a.slot - b.slot)
    .map((e) => e.k);
}
