// The dev stack's vector side port in front of its own platform: the chosen indexes called in-process,
// plus the indexes created at run time (a VADD of a dimension no index has makes `vset-<dimension>`, as
// Redis 8 creates a vector set of any dimension; issue 21), those of an earlier run included.
import type { RunningPlatform } from '../../platform/platform.js';
import type { VectorSideportOptions } from '../../sideports/vector-port.js';

type DevVectorIndexes = Required<Pick<VectorSideportOptions, 'url' | 'token' | 'local' | 'more' | 'createIndex'>>;

export function devVectorIndexes(platform: RunningPlatform, names: string[], token: string): DevVectorIndexes {
  // The side port calls its platform in-process: the same operations without an HTTP round trip.
  const index = (name: string) => ({
    url: `${platform.url}/vector/${name}`,
    token,
    local: (op: string, ns: string | undefined, body: unknown) => platform.vectorLocal(name, op, ns, body, token),
  });
  const created = platform.vectorRuntimeIndexes().filter((name) => !names.includes(name));
  const [first, ...more] = [...names, ...created].map(index);
  return { ...first, more, createIndex: async (dimension) => index(await platform.vectorCreateIndex(dimension)) };
}
