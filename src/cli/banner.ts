// What each role prints once it is ready: where to connect, with which credentials, and how to stop.
// Types only from the roles' modules, so that loading this file loads none of them.
import type { RunningPlatform } from '../platform/platform.js';
import type { RunningProxy } from '../proxy/server.js';
import type { RunningSideport } from '../sideports/server.js';
import { RESPGATE_VERSION } from '../version.js';
import { FLAG } from './options.js';

export const VERSION = RESPGATE_VERSION;

/** The banner of the local platform, and of the dev stack when a proxy runs in front of it. */
export function stackBanner(
  p: RunningPlatform,
  redisUrl: string | undefined,
  proxy?: RunningProxy,
  requirepass?: string,
  sideportLines: string[] = [],
): string {
  const lines = [
    '',
    `respgate ${VERSION}: ${proxy ? 'dev stack' : 'local platform'} ready`,
    '',
    ...(proxy
      ? [
          `  Redis protocol (proxy)        redis://${proxy.host}:${proxy.port}`,
          `    redis-cli -p ${proxy.port}${proxy.host === '127.0.0.1' ? '' : ` -h ${proxy.host}`}${requirepass ? ' -a <requirepass>' : ''}`,
          '',
        ]
      : []),
    ...sideportLines,
    `  Key-value REST API            ${p.url}`,
    ...dataStoreLines(p, redisUrl),
    '',
    '  Paste into your shell (then @upstash/redis Redis.fromEnv() finds them):',
    `    export UPSTASH_REDIS_REST_URL=${p.url}`,
    `    export UPSTASH_REDIS_REST_TOKEN=${p.token}`,
    `    # read-only token: ${p.readonlyToken}`,
    '',
    ...p.areaBanner,
    `  Try it:  curl -H "Authorization: Bearer $UPSTASH_REDIS_REST_TOKEN" ${p.url}/set/greeting/hello`,
    `  Health:  ${p.url}/healthz, ${p.url}/readyz    Metrics: ${p.url}/metrics (Prometheus)`,
    '',
    ...dataDirLines(p, redisUrl),
    '',
  ];
  return lines.join('\n');
}

/** Where the data stays, and how to stop (the data directory's notes first). */
function dataDirLines(p: RunningPlatform, redisUrl: string | undefined): string[] {
  const notes = p.dataDirNotes.map((n) => `    note: ${n}`);
  if (p.dataDir && redisUrl)
    return [...notes, `  Press Ctrl+C to stop (the data stays in the Redis of ${FLAG.redisUrl}; vectors and the queue in ${p.dataDir}).`];
  if (p.dataDir)
    return [
      ...notes,
      `  Press Ctrl+C to stop (the data stays in ${p.dataDir}; ${FLAG.dataDir} to choose another, ${FLAG.ephemeral} to keep nothing).`,
    ];
  if (redisUrl) return [`  Press Ctrl+C to stop (the data stays in the Redis of ${FLAG.redisUrl}).`];
  return [`  Press Ctrl+C to stop (${FLAG.ephemeral}: the embedded stores are deleted on exit).`];
}

/**
 * Where the data lives. In a Redis the platform does not own (--redis-url) it creates the ACL user
 * `default_ro` (the Read Only token's identity) and loads the `respgate_json` function library; both
 * stay after exit because other platform processes on the same store may share them.
 */
function dataStoreLines(p: RunningPlatform, redisUrl: string | undefined): string[] {
  if (p.dataStore && !redisUrl)
    return [
      `  data store                    embedded redis-server on 127.0.0.1:${p.dataStore.port} (${p.dataDir ? `kept in ${p.dataDir}` : 'deleted on exit'})`,
    ];
  return [
    `  data store                    ${redactUrl(redisUrl!)}`,
    '    created there and kept after exit: ACL user default_ro, function library respgate_json',
    '    (remove with: ACL DELUSER default_ro; FUNCTION DELETE respgate_json)',
  ];
}

function redactUrl(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/** The standalone proxy's ready lines. */
export function proxyBanner(
  proxy: RunningProxy,
  url: string,
  token: { given: boolean; fromEnv: boolean },
  upstreamOk: boolean,
  metricsPort?: number,
): string {
  return (
    `respgate ${VERSION}: proxy ready on redis://${proxy.host}:${proxy.port} in front of ${new URL(url).origin}\n  redis-cli -p ${proxy.port}\n` +
    (upstreamOk
      ? ''
      : `  the upstream does not answer yet (${proxy.upstream.problem}); commands fail until it does, checking again in the background\n`) +
    (proxy.tlsPort !== undefined ? `  TLS: rediss://${proxy.host}:${proxy.tlsPort}\n` : '') +
    (!token.given
      ? `  no ${FLAG.upstreamToken}: clients authenticate with their own REST token (AUTH <token>)\n`
      : token.fromEnv
        ? '  upstream token from UPSTASH_REDIS_REST_TOKEN (unset it for pass-through: each client AUTHs with its own token)\n'
        : '') +
    (metricsPort !== undefined ? `  metrics: http://${proxy.host}:${metricsPort}/metrics   health: /healthz, /readyz\n` : '')
  );
}

/** The side ports' lines in the dev stack's banner. */
export function sideportBanner(sideports: RunningSideport[], requirepass?: string, vectorIndex?: string): string[] {
  const lines: string[] = [];
  for (const s of sideports) {
    const what = s.role === 'vector' ? 'Vector side port (VSIM…)' : 'Queue side port (QPUBLISH…)';
    lines.push(
      `  ${what.padEnd(30)}redis://${s.host}:${s.port}${s.role === 'vector' && vectorIndex ? `   (index ${vectorIndex}; the key is the namespace)` : ''}`,
    );
    lines.push(...sideportHelpLines(s, Boolean(requirepass)));
  }
  return lines.length ? [...lines, ''] : [];
}

/** How to reach a side port, and its help: redis-cli answers HELP itself, from the port's COMMAND DOCS. */
export function sideportHelpLines(s: RunningSideport, requirepass: boolean): string[] {
  const [groups, example] = s.role === 'vector' ? ['help @vector_set', 'VSIM'] : ['help @queue, help @account', 'QPUBLISH'];
  return [
    `    redis-cli -p ${s.port}${s.host === '127.0.0.1' ? '' : ` -h ${s.host}`}${requirepass ? ' -a <requirepass>' : ''}`,
    `    commands: ${groups} in redis-cli (help ${example} or ${example} HELP for one); HELP from other clients`,
  ];
}
