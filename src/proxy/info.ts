// INFO as Redis 7.0.15 lays it out, describing the proxy: clients read redis_version, loading,
// maxmemory_policy and role from it during their handshake.
import os from 'node:os';
import type { Session, SessionRegistry } from './session.js';

interface InfoContext {
  registry: SessionRegistry;
  session: Session;
  /** `db0:keys=…` from the upstream; undefined when it has no keys (Redis then prints no line). */
  keyspaceLine: string | undefined;
}

type Section = (ctx: InfoContext) => Array<[string, string | number]>;

const RUN_ID = [...crypto.getRandomValues(new Uint8Array(20))].map((b) => b.toString(16).padStart(2, '0')).join('');

const SECTIONS: Record<string, Section> = {
  server: ({ registry, session }) => {
    const uptime = Math.floor((Date.now() - registry.startedAt) / 1000);
    return [
      ['redis_version', '7.0.15'], ['redis_git_sha1', '00000000'], ['redis_git_dirty', 0], ['redis_build_id', '0'],
      ['redis_mode', 'standalone'], ['os', `${os.type()} ${os.release()} ${os.arch()}`], ['arch_bits', 64],
      ['monotonic_clock', 'POSIX clock_gettime'], ['multiplexing_api', 'epoll'], ['atomicvar_api', 'c11-builtin'],
      ['gcc_version', '0.0.0'], ['process_id', process.pid], ['process_supervised', 'no'], ['run_id', RUN_ID],
      ['tcp_port', session.socket.localPort ?? 0], ['server_time_usec', Date.now() * 1000], ['uptime_in_seconds', uptime],
      ['uptime_in_days', Math.floor(uptime / 86400)], ['hz', 10], ['configured_hz', 10], ['lru_clock', Math.floor(Date.now() / 1000) % 16777216],
      ['executable', process.argv[1] ?? 'respgate'], ['config_file', ''], ['io_threads_active', 0],
    ];
  },
  clients: ({ registry }) => [
    ['connected_clients', [...registry.sessions()].length], ['cluster_connections', 0], ['maxclients', 10000],
    ['client_recent_max_input_buffer', 0], ['client_recent_max_output_buffer', 0], ['blocked_clients', 0],
    ['tracking_clients', 0], ['clients_in_timeout_table', 0],
  ],
  memory: () => {
    const rss = process.memoryUsage().rss;
    return [
      ['used_memory', rss], ['used_memory_human', human(rss)], ['used_memory_rss', rss], ['used_memory_rss_human', human(rss)],
      ['used_memory_peak', rss], ['maxmemory', 0], ['maxmemory_human', '0B'], ['maxmemory_policy', 'noeviction'],
      ['mem_allocator', 'libc'],
    ];
  },
  persistence: () => [
    ['loading', 0], ['async_loading', 0], ['current_cow_peak', 0], ['rdb_changes_since_last_save', 0],
    ['rdb_bgsave_in_progress', 0], ['rdb_last_bgsave_status', 'ok'], ['aof_enabled', 0], ['aof_rewrite_in_progress', 0],
    ['aof_last_bgrewrite_status', 'ok'], ['aof_last_write_status', 'ok'],
  ],
  stats: ({ registry }) => [
    ['total_connections_received', registry.nextIdPeek()], ['total_commands_processed', registry.batcher.stats.commands],
    ['instantaneous_ops_per_sec', 0], ['rejected_connections', 0], ['expired_keys', 0], ['evicted_keys', 0],
    ['keyspace_hits', 0], ['keyspace_misses', 0], ['pubsub_channels', 0], ['pubsub_patterns', 0],
    ['total_upstream_calls', registry.batcher.stats.calls],
  ],
  replication: () => [
    ['role', 'master'], ['connected_slaves', 0], ['master_failover_state', 'no-failover'],
    ['master_replid', RUN_ID], ['master_replid2', '0'.repeat(40)], ['master_repl_offset', 0], ['second_repl_offset', -1],
    ['repl_backlog_active', 0], ['repl_backlog_size', 1048576], ['repl_backlog_first_byte_offset', 0], ['repl_backlog_histlen', 0],
  ],
  cpu: () => {
    const u = process.cpuUsage();
    return [['used_cpu_sys', (u.system / 1e6).toFixed(6)], ['used_cpu_user', (u.user / 1e6).toFixed(6)]];
  },
  modules: () => [],
  errorstats: () => [],
  cluster: () => [['cluster_enabled', 0]],
  keyspace: () => [],
};

const DEFAULT = ['server', 'clients', 'memory', 'persistence', 'stats', 'replication', 'cpu', 'modules', 'errorstats', 'cluster', 'keyspace'];

export function buildInfo(requested: string[], ctx: InfoContext): string {
  let names: string[];
  if (requested.length === 0 || requested.some((s) => ['all', 'everything', 'default'].includes(s))) names = DEFAULT;
  else names = DEFAULT.filter((n) => requested.includes(n));
  const parts: string[] = [];
  for (const name of names) {
    const title = name === 'cpu' ? 'CPU' : name[0].toUpperCase() + name.slice(1);
    let body = SECTIONS[name](ctx).map(([k, v]) => `${k}:${v}\r\n`).join('');
    if (name === 'keyspace' && ctx.keyspaceLine) body = `${ctx.keyspaceLine}\r\n`;
    parts.push(`# ${title}\r\n${body}`);
  }
  return parts.join('\r\n');
}

function human(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(2)}K`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(2)}M`;
  return `${(bytes / 1024 ** 3).toFixed(2)}G`;
}
