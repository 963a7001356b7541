// The Upstash-Retry-Delay expression: arithmetic in milliseconds over the variable `retried`
// (retries done before this one, from 0), with pow sqrt abs exp floor ceil round min max.
// Parsed once at publish (so a bad expression is a 400 then), evaluated at each retry.
type Node =
  | { kind: 'num'; value: number }
  | { kind: 'var' }
  | { kind: 'neg'; arg: Node }
  | { kind: 'bin'; op: string; left: Node; right: Node }
  | { kind: 'call'; fn: string; args: Node[] };

const FUNCTIONS: Record<string, { arity: [number, number]; apply: (...a: number[]) => number }> = {
  pow: { arity: [2, 2], apply: Math.pow },
  sqrt: { arity: [1, 1], apply: Math.sqrt },
  abs: { arity: [1, 1], apply: Math.abs },
  exp: { arity: [1, 1], apply: Math.exp },
  floor: { arity: [1, 1], apply: Math.floor },
  ceil: { arity: [1, 1], apply: Math.ceil },
  round: { arity: [1, 1], apply: Math.round },
  min: { arity: [1, 64], apply: Math.min },
  max: { arity: [1, 64], apply: Math.max },
};

export class RetryDelayError extends Error {}

export function parseRetryDelay(text: string): Node {
  const tokens = text.match(/\d+(?:\.\d+)?|[A-Za-z_]+|[-+*/%(),]|\S/g) ?? [];
  let i = 0;
  const fail = (why: string): never => {
    throw new RetryDelayError(`invalid retry delay expression '${text}': ${why} (example: pow(2, retried) * 1000)`);
  };
  const peek = () => tokens[i];
  const expect = (t: string) => (tokens[i] === t ? i++ : fail(`expected '${t}'${tokens[i] ? ` at '${tokens[i]}'` : ' at the end'}`));
  const sum = (): Node => {
    let left = product();
    while (peek() === '+' || peek() === '-') {
      const op = tokens[i++];
      left = { kind: 'bin', op, left, right: product() };
    }
    return left;
  };
  const product = (): Node => {
    let left = unary();
    while (peek() === '*' || peek() === '/' || peek() === '%') {
      const op = tokens[i++];
      left = { kind: 'bin', op, left, right: unary() };
    }
    return left;
  };
  const unary = (): Node => {
    if (peek() === '-') {
      i++;
      return { kind: 'neg', arg: unary() };
    }
    if (peek() === '+') i++;
    return atom();
  };
  const atom = (): Node => {
    const t = tokens[i++];
    if (t === undefined) return fail('it ends too early');
    if (/^\d/.test(t)) return { kind: 'num', value: Number(t) };
    if (t === '(') {
      const inner = sum();
      expect(')');
      return inner;
    }
    if (t === 'retried') return { kind: 'var' };
    const fn = FUNCTIONS[t];
    if (!fn) return fail(`unknown name '${t}' (use retried, pow, sqrt, abs, exp, floor, ceil, round, min, max)`);
    expect('(');
    const args: Node[] = [sum()];
    while (peek() === ',') {
      i++;
      args.push(sum());
    }
    expect(')');
    if (args.length < fn.arity[0] || args.length > fn.arity[1])
      fail(`${t} takes ${fn.arity[0] === fn.arity[1] ? fn.arity[0] : `${fn.arity[0]} or more`} argument(s)`);
    return { kind: 'call', fn: t, args };
  };
  if (tokens.length === 0) fail('it is empty');
  const tree = sum();
  if (i < tokens.length) fail(`unexpected '${tokens[i]}'`);
  return tree;
}

export function evaluateRetryDelay(tree: Node, retried: number): number {
  switch (tree.kind) {
    case 'num':
      return tree.value;
    case 'var':
      return retried;
    case 'neg':
      return -evaluateRetryDelay(tree.arg, retried);
    case 'call':
      return FUNCTIONS[tree.fn].apply(...tree.args.map((a) => evaluateRetryDelay(a, retried)));
    case 'bin': {
      const l = evaluateRetryDelay(tree.left, retried);
      const r = evaluateRetryDelay(tree.right, retried);
      return tree.op === '+' ? l + r : tree.op === '-' ? l - r : tree.op === '*' ? l * r : tree.op === '/' ? l / r : l % r;
    }
  }
}

/** Milliseconds to wait before retry number `retried + 1`, bounded to [0, 1 day]. */
export function retryDelayMs(expression: string, retried: number): number {
  const ms = evaluateRetryDelay(parseRetryDelay(expression), retried);
  // NaN (e.g. sqrt(-1)) retries at once; an infinite delay is capped like any other.
  return Number.isNaN(ms) ? 0 : Math.min(86_400_000, Math.max(0, Math.round(ms)));
}

/** The real service's default backoff: min(1 day, e^(2.5 n)) seconds, n = retries so far including this one. */
export function defaultBackoffMs(retryNumber: number, scale: number): number {
  return Math.round(Math.min(86_400, Math.exp(2.5 * retryNumber)) * 1000 * scale);
}
