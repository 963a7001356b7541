// INFO as Redis 7.0.15 lays it out, describing the proxy: clients read redis_version, loading,
// maxmemory_policy and role from it during their handshake.
import os from 'node:os';
import type { Connection } from '../../server/context.js';
import { clientCostLines } from '../client-cost.js';
import type { ProxyServerState } from '../context.js';
import { REDIS_VERSION } from '../../version.js';

interface InfoContext {
  server: ProxyServerState;
  conn: Connection;
  /** `db0:keys=…` from the upstream; undefined when it has no keys (Redis then prints no line). */
  keyspaceLine: string | undefined;
}

type Section = (ctx: InfoContext) => Array<[string, string | number]>;

/** CONFIG RESETSTAT (server.c resetServerStats): commands, errors, connections received and traffic start from 0. */
export function resetInfoStats(server: ProxyServerState): void {
  server.commandStats.reset();
  server.clientCost.resetInfo();
  const traffic = server.traffic();
  server.commandStats.baseline = { connections: server.acceptedConnections, input: traffic.input, output: traffic.output };
}

function statsSince(server: ProxyServerState): { connections: number; input: number; output: number } {
  const base = server.commandStats.baseline;
  const traffic = server.traffic();
  return {
    connections: server.acceptedConnections - base.connections,
    input: traffic.input - base.input,
    output: traffic.output - base.output,
  };
}

// A run's identifier, not a secret: Math.random (V8 seeds it from the system's entropy) rather than web
// crypto, whose ~26 modules would load with the proxy (~5 ms of its start: docs/decisions.md, 2026-11-28).
const RUN_ID = Array.from({ length: 40 }, () => Math.floor(Math.random() * 16).toString(16)).join('');

const SECTIONS: Record<string, Section> = {
  server: ({ server, conn }) => {
    const uptime = Math.floor((Date.now() - server.startedAt) / 1000);
    return [
      ['redis_version', REDIS_VERSION],
      ['redis_git_sha1', '00000000'],
      ['redis_git_dirty', 0],
      ['redis_build_id', '0'],
      ['redis_mode', 'standalone'],
      ['os', `${os.type()} ${os.release()} ${os.arch()}`],
      ['arch_bits', 64],
      ['monotonic_clock', 'POSIX clock_gettime'],
      ['multiplexing_api', 'epoll'],
      ['atomicvar_api', 'c11-builtin'],
      ['gcc_version', '0.0.0'],
      ['process_id', process.pid],
      ['process_supervised', 'no'],
      ['run_id', RUN_ID],
      ['tcp_port', conn.localPort],
      ['server_time_usec', Date.now() * 1000],
      ['uptime_in_seconds', uptime],
      ['uptime_in_days', Math.floor(uptime / 86400)],
      ['hz', 10],
      ['configured_hz', 10],
      ['lru_clock', Math.floor(Date.now() / 1000) % 16777216],
      ['executable', process.argv[1] ?? 'respgate'],
      ['config_file', ''],
      ['io_threads_active', 0],
    ];
  },
  clients: ({ server }) => [
    ['connected_clients', [...server.connections()].length],
    ['cluster_connections', 0],
    ['maxclients', server.settings.maxClients],
    ['client_recent_max_input_buffer', 0],
    ['client_recent_max_output_buffer', 0],
    ['blocked_clients', [...server.connections()].filter((c) => c.isBlocked).length],
    ['tracking_clients', 0],
    ['clients_in_timeout_table', 0],
  ],
  memory: () => {
    const { rss, heapUsed } = process.memoryUsage();
    const total = os.totalmem();
    return [
      ['used_memory', rss],
      ['used_memory_human', human(rss)],
      ['used_memory_rss', rss],
      ['used_memory_rss_human', human(rss)],
      ['used_memory_peak', rss],
      ['used_memory_peak_human', human(rss)],
      ['used_memory_peak_perc', '100.00%'],
      ['used_memory_overhead', rss - heapUsed],
      ['used_memory_startup', 0],
      ['used_memory_dataset', heapUsed],
      ['used_memory_dataset_perc', `${((100 * heapUsed) / rss).toFixed(2)}%`],
      ['allocator_allocated', rss],
      ['allocator_active', rss],
      ['allocator_resident', rss],
      ['total_system_memory', total],
      ['total_system_memory_human', human(total)],
      ['used_memory_lua', 0],
      ['used_memory_vm_eval', 0],
      ['used_memory_lua_human', '0B'],
      ['used_memory_scripts_eval', 0],
      ['number_of_cached_scripts', 0],
      ['number_of_functions', 0],
      ['number_of_libraries', 0],
      ['used_memory_vm_functions', 0],
      ['used_memory_vm_total', 0],
      ['used_memory_vm_total_human', '0B'],
      ['used_memory_functions', 0],
      ['used_memory_scripts', 0],
      ['used_memory_scripts_human', '0B'],
      ['maxmemory', 0],
      ['maxmemory_human', '0B'],
      ['maxmemory_policy', 'noeviction'],
      ['allocator_frag_ratio', '1.00'],
      ['allocator_frag_bytes', 0],
      ['allocator_rss_ratio', '1.00'],
      ['allocator_rss_bytes', 0],
      ['rss_overhead_ratio', '1.00'],
      ['rss_overhead_bytes', 0],
      ['mem_fragmentation_ratio', '1.00'],
      ['mem_fragmentation_bytes', 0],
      ['mem_not_counted_for_evict', 0],
      ['mem_replication_backlog', 0],
      ['mem_total_replication_buffers', 0],
      ['mem_clients_slaves', 0],
      ['mem_clients_normal', 0],
      ['mem_cluster_links', 0],
      ['mem_aof_buffer', 0],
      ['mem_allocator', 'libc'],
      ['active_defrag_running', 0],
      ['lazyfree_pending_objects', 0],
      ['lazyfreed_objects', 0],
    ];
  },
  persistence: ({ server }) => [
    ['loading', 0],
    ['async_loading', 0],
    ['current_cow_peak', 0],
    ['current_cow_size', 0],
    ['current_cow_size_age', 0],
    ['current_fork_perc', '0.00'],
    ['current_save_keys_processed', 0],
    ['current_save_keys_total', 0],
    ['rdb_changes_since_last_save', 0],
    ['rdb_bgsave_in_progress', 0],
    ['rdb_last_save_time', Math.floor(server.startedAt / 1000)],
    ['rdb_last_bgsave_status', 'ok'],
    ['rdb_last_bgsave_time_sec', -1],
    ['rdb_current_bgsave_time_sec', -1],
    ['rdb_saves', 0],
    ['rdb_last_cow_size', 0],
    ['rdb_last_load_keys_expired', 0],
    ['rdb_last_load_keys_loaded', 0],
    ['aof_enabled', 0],
    ['aof_rewrite_in_progress', 0],
    ['aof_rewrite_scheduled', 0],
    ['aof_last_rewrite_time_sec', -1],
    ['aof_current_rewrite_time_sec', -1],
    ['aof_last_bgrewrite_status', 'ok'],
    ['aof_rewrites', 0],
    ['aof_rewrites_consecutive_failures', 0],
    ['aof_last_write_status', 'ok'],
    ['aof_last_cow_size', 0],
    ['module_fork_in_progress', 0],
    ['module_fork_last_cow_size', 0],
  ],
  stats: ({ server }) => {
    const since = statsSince(server);
    return [
      ['total_connections_received', since.connections],
      // Every command that ran, local ones included, as Redis' stat_numcommands.
      ['total_commands_processed', server.commandStats.totalCalls],
      ['instantaneous_ops_per_sec', 0],
      ['total_net_input_bytes', since.input],
      ['total_net_output_bytes', since.output],
      ['total_net_repl_input_bytes', 0],
      ['total_net_repl_output_bytes', 0],
      ['instantaneous_input_kbps', '0.00'],
      ['instantaneous_output_kbps', '0.00'],
      ['instantaneous_input_repl_kbps', '0.00'],
      ['instantaneous_output_repl_kbps', '0.00'],
      ['rejected_connections', 0],
      ['sync_full', 0],
      ['sync_partial_ok', 0],
      ['sync_partial_err', 0],
      ['expired_keys', 0],
      ['expired_stale_perc', '0.00'],
      ['expired_time_cap_reached_count', 0],
      ['expire_cycle_cpu_milliseconds', 0],
      ['evicted_keys', 0],
      ['evicted_clients', 0],
      ['total_eviction_exceeded_time', 0],
      ['current_eviction_exceeded_time', 0],
      ['keyspace_hits', 0],
      ['keyspace_misses', 0],
      ['pubsub_channels', 0],
      ['pubsub_patterns', 0],
      ['pubsubshard_channels', 0],
      ['latest_fork_usec', 0],
      ['total_forks', 0],
      ['migrate_cached_sockets', 0],
      ['slave_expires_tracked_keys', 0],
      ['active_defrag_hits', 0],
      ['active_defrag_misses', 0],
      ['active_defrag_key_hits', 0],
      ['active_defrag_key_misses', 0],
      ['total_active_defrag_time', 0],
      ['current_active_defrag_time', 0],
      ['tracking_total_keys', 0],
      ['tracking_total_items', 0],
      ['tracking_total_prefixes', 0],
      ['unexpected_error_replies', 0],
      ['total_error_replies', server.commandStats.totalErrorReplies],
      ['dump_payload_sanitizations', 0],
      ['total_reads_processed', 0],
      ['total_writes_processed', 0],
      ['io_threaded_reads_processed', 0],
      ['io_threaded_writes_processed', 0],
      ['reply_buffer_shrinks', 0],
      ['reply_buffer_expands', 0],
      // respgate's own counter (not in Redis): upstream HTTP calls made for forwarded commands.
      ['total_upstream_calls', server.stats.calls],
    ];
  },
  replication: () => [
    ['role', 'master'],
    ['connected_slaves', 0],
    ['master_failover_state', 'no-failover'],
    ['master_replid', RUN_ID],
    ['master_replid2', '0'.repeat(40)],
    ['master_repl_offset', 0],
    ['second_repl_offset', -1],
    ['repl_backlog_active', 0],
    ['repl_backlog_size', 1048576],
    ['repl_backlog_first_byte_offset', 0],
    ['repl_backlog_histlen', 0],
  ],
  cpu: () => {
    const u = process.cpuUsage();
    const sys = (u.system / 1e6).toFixed(6);
    const user = (u.user / 1e6).toFixed(6);
    return [
      ['used_cpu_sys', sys],
      ['used_cpu_user', user],
      ['used_cpu_sys_children', '0.000000'],
      ['used_cpu_user_children', '0.000000'],
      ['used_cpu_sys_main_thread', sys],
      ['used_cpu_user_main_thread', user],
    ];
  },
  modules: () => [],
  // The commands the proxy ran and the errors it answered (command-stats.ts).
  commandstats: ({ server }) => server.commandStats.commandLines(),
  errorstats: ({ server }) => server.commandStats.errorLines(),
  // respgate's own section: what each client and command costs upstream (client-cost.ts, docs/proxy.md).
  clientcost: ({ server }) => clientCostLines(server.clientCost),
  // Each command's p50, p99 and p99.9 from its latency histogram (command-stats.ts).
  latencystats: ({ server }) => server.commandStats.latencyLines(),
  cluster: () => [['cluster_enabled', 0]],
  keyspace: () => [],
};

/** Every section, in Redis 7.0's output order. */
const ALL = [
  'server',
  'clients',
  'memory',
  'persistence',
  'stats',
  'replication',
  'cpu',
  'modules',
  'commandstats',
  'errorstats',
  'clientcost',
  'latencystats',
  'cluster',
  'keyspace',
];
/** What INFO and INFO default show (server.c genInfoSectionDict: all but commandstats and latencystats). */
const DEFAULT = ALL.filter((n) => n !== 'commandstats' && n !== 'latencystats' && n !== 'clientcost');
/** INFO all / everything: Redis' own sections; respgate's clientcost only when named (INFO clientcost). */
const REDIS_ALL = ALL.filter((n) => n !== 'clientcost');

/** Sections are lowercase names; `default`, `all` and `everything` expand as in Redis; unknown names are ignored. */
export function buildInfo(requested: string[], ctx: InfoContext): string {
  const wanted = new Set<string>(requested.length === 0 ? DEFAULT : []);
  for (const r of requested) {
    if (r === 'default') DEFAULT.forEach((n) => wanted.add(n));
    else if (r === 'all' || r === 'everything') REDIS_ALL.forEach((n) => wanted.add(n));
    else wanted.add(r);
  }
  const names = ALL.filter((n) => wanted.has(n));
  const parts: string[] = [];
  for (const name of names) {
    const title = name === 'cpu' ? 'CPU' : name[0].toUpperCase() + name.slice(1);
    let body = SECTIONS[name](ctx)
      .map(([k, v]) => `${k}:${v}\r\n`)
      .join('');
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
