// Describes the shape of a reply, enough to rebuild it exactly from a lossy form: the RESP3 reply Redis
// would send from the RESP2 bytes (resp3-converter.ts), or either protocol from the JSON of /multi-exec
// (upstream/json-to-resp.ts). resp/ knows RESP, not commands: which command has which shape is
// commands/reply-types.ts.

/**
 * Leaves:
 * - `any`: whatever comes, kept as it is (nulls become RESP3 `_`); in JSON a string is a bulk string and
 *   an array holds `any` items.
 * - `status`: a simple string (`+PONG`, `+string`); JSON carries it like a bulk string.
 * - `bulk`, `int`: a bulk string, an integer.
 * - `double`: a bulk string of `%.17g` text in RESP2, a RESP3 double (`,1.5`).
 * - `verbatim`: a bulk string in RESP2, a RESP3 verbatim string (`=<n>\r\ntxt:…`).
 * - `bool`: `:1`/`:0` in RESP2, `#t`/`#f` in RESP3.
 */
export type ReplyLeaf = 'any' | 'status' | 'bulk' | 'int' | 'double' | 'verbatim' | 'bool';

/** What a null in this position is in RESP2: the null bulk `$-1` or the null array `*-1` (both `_` in RESP3). */
export type NullKind = 'bulk' | 'array';

interface Composite {
  /** RESP2 null of this position when JSON says null (default `array`). */
  nil?: NullKind;
}

/** An array whose every element has the shape `of`. */
export interface ArrayShape extends Composite {
  kind: 'array';
  of: ReplyShape;
}

/** An array in RESP2, a set (`~n`) in RESP3. */
export interface SetShape extends Composite {
  kind: 'set';
  of: ReplyShape;
}

/**
 * A map (`%n` in RESP3). In RESP2 it is either a flat array of 2n items, key then value (`flat`, the
 * default: HGETALL, CONFIG GET, XINFO STREAM), or an array of n two-item arrays (`nested`: XREAD).
 * A value's shape is `fields[key]` when the key is listed there, else `value`.
 */
export interface MapShape extends Composite {
  kind: 'map';
  key: ReplyShape;
  value: ReplyShape;
  fields?: Readonly<Record<string, ReplyShape>>;
  resp2?: 'flat' | 'nested';
}

/**
 * A flat RESP2 array of 2n items (ZRANGE … WITHSCORES: member, score, member, score) that RESP3 sends as
 * an array of n two-item arrays.
 */
export interface PairsShape extends Composite {
  kind: 'pairs';
  first: ReplyShape;
  second: ReplyShape;
}

/** An array whose items have shapes by position; items beyond `items` have the shape `rest` (default `any`). */
export interface TupleShape extends Composite {
  kind: 'tuple';
  items: readonly ReplyShape[];
  rest?: ReplyShape;
}

export type ReplyShape = ReplyLeaf | ArrayShape | SetShape | MapShape | PairsShape | TupleShape;

// Builders, so tables of shapes read like the replies they describe.
export const arrayOf = (of: ReplyShape, nil?: NullKind): ArrayShape => (nil ? { kind: 'array', of, nil } : { kind: 'array', of });
export const setOf = (of: ReplyShape): SetShape => ({ kind: 'set', of });
export const mapOf = (
  value: ReplyShape = 'any',
  fields?: Record<string, ReplyShape>,
  options: { key?: ReplyShape; nil?: NullKind; resp2?: 'flat' | 'nested' } = {},
): MapShape => ({
  kind: 'map',
  key: options.key ?? 'bulk',
  value,
  ...(fields ? { fields } : {}),
  ...(options.nil ? { nil: options.nil } : {}),
  ...(options.resp2 ? { resp2: options.resp2 } : {}),
});
export const pairsOf = (first: ReplyShape, second: ReplyShape): PairsShape => ({ kind: 'pairs', first, second });
export const tupleOf = (items: readonly ReplyShape[], options: { rest?: ReplyShape; nil?: NullKind } = {}): TupleShape => ({
  kind: 'tuple',
  items,
  ...options,
});

/** The shape of the item at `index` of an array-like shape (`any` for leaves). */
export function itemShape(shape: ReplyShape, index: number): ReplyShape {
  if (typeof shape === 'string') return 'any';
  switch (shape.kind) {
    case 'array':
    case 'set':
      return shape.of;
    case 'tuple':
      return index < shape.items.length ? shape.items[index] : (shape.rest ?? 'any');
    default:
      return 'any';
  }
}
