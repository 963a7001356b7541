// `respgate vector`: the vector side port alone, in front of a remote vector index.
import { ConfigError } from '../../config.js';
import { createLogger } from '../../logger.js';
import { startVectorSideport } from '../../sideports/vector-port.js';
import { ENV, FLAG, type VectorRoleFlags } from '../options.js';
import { listenerSettings } from '../listener-settings.js';
import { requirepassOf } from '../proxy-config.js';
import { restUrl, serveSideportRole } from './sideport.js';

export async function run(f: VectorRoleFlags): Promise<void> {
  const url = restUrl(f.vectorUrl || process.env.UPSTASH_VECTOR_REST_URL, FLAG.vectorUrl, `${ENV.vectorUrl} / UPSTASH_VECTOR_REST_URL`);
  const token = f.vectorToken || process.env.UPSTASH_VECTOR_REST_TOKEN;
  if (!token) throw new ConfigError(`no vector token: give ${FLAG.vectorToken} (or ${ENV.vectorToken} / UPSTASH_VECTOR_REST_TOKEN)`);
  const log = createLogger(f.logLevel);
  const s = await startVectorSideport(
    {
      host: f.host,
      port: f.vectorPort,
      requirepass: requirepassOf(f),
      allowUnauthenticated: f.allowUnauthenticated,
      url,
      token,
      more: (f.vectorIndex ?? []).map((i) => ({ url: restUrl(i.url, FLAG.vectorIndex, ENV.vectorIndex), token: i.token ?? token })),
      addHint: `${FLAG.vectorIndex} URL[,TOKEN] (an index of that dimension)`,
      timeoutMs: f.upstreamTimeout,
      ...listenerSettings(f, 'vector'),
    },
    log,
  );
  await serveSideportRole(s, f, `vector side port ready on redis://${s.host}:${s.port} in front of ${new URL(url).origin}`);
}
