// Filters shared by message cancellation, the DLQ and the event log: each given field must match
// one of its values (values ORed, fields ANDed), as the service's list endpoints filter.

export interface Filterable {
  url: string;
  topicName?: string;
  queueName?: string;
  scheduleId?: string;
  labels?: string[];
  callerIp?: string;
  createdAt?: number;
  /** A log event names its key; a message keeps its whole flow control. */
  flowControlKey?: string;
  flowControl?: { key: string };
}

export function messageFilter(q: URLSearchParams): (m: Filterable, time?: number) => boolean {
  const list = (name: string) =>
    q
      .getAll(name)
      .flatMap((v) => v.split(','))
      .filter(Boolean);
  const urls = list('url');
  const topics = [...list('topicName'), ...list('urlGroup')];
  const queues = list('queueName');
  const schedules = list('scheduleId');
  const labels = list('label');
  const ips = list('callerIp');
  const flowKeys = list('flowControlKey');
  const hosts = list('host');
  const paths = list('path');
  const from = Number(q.get('fromDate') ?? 0);
  const to = Number(q.get('toDate') ?? 0);
  return (m, time) => {
    const t = time ?? m.createdAt ?? 0;
    if (urls.length && !urls.includes(m.url)) return false;
    if (topics.length && !topics.includes(m.topicName ?? '')) return false;
    if (queues.length && !queues.includes(m.queueName ?? '')) return false;
    if (schedules.length && !schedules.includes(m.scheduleId ?? '')) return false;
    if (labels.length && !labels.some((l) => m.labels?.includes(l))) return false;
    if (ips.length && !ips.includes(m.callerIp ?? '')) return false;
    if (flowKeys.length && !flowKeys.includes(m.flowControlKey ?? m.flowControl?.key ?? '')) return false;
    if (hosts.length || paths.length) {
      const u = new URL(m.url);
      if (hosts.length && !hosts.includes(u.host)) return false;
      if (paths.length && !paths.includes(u.pathname)) return false;
    }
    if (from && t < from) return false;
    if (to && t > to) return false;
    return true;
  };
}
