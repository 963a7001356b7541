// Schedules: a BullMQ job scheduler per schedule (cron pattern, optional CRON_TZ=), whose ticks
// publish the stored request again, like the service's schedules. Pause removes the scheduler and
// resume puts it back; the record keeps the request.
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from '../../logger.js';
import { BULL_PREFIX } from './engine.js';
import { badRequest } from './errors.js';
import type { Publisher } from './publisher.js';
import type { QueueRecords, ScheduleRecord } from './records.js';

const SCHEDULE_QUEUE = 'schedules';

export class Schedules {
  private readonly queue: Queue;
  private readonly worker: Worker;

  constructor(
    connection: ConnectionOptions,
    private readonly records: QueueRecords,
    private readonly publisher: Publisher,
    private readonly log: Logger,
  ) {
    this.queue = new Queue(SCHEDULE_QUEUE, { connection, prefix: BULL_PREFIX });
    this.queue.on('error', (err) => log.warn({ err: String(err) }, 'schedules: redis error'));
    this.worker = new Worker(SCHEDULE_QUEUE, (job: Job<{ scheduleId: string }>) => this.tick(job.data.scheduleId), {
      connection,
      prefix: BULL_PREFIX,
      concurrency: 8,
    });
    this.worker.on('error', (err) => log.warn({ err: String(err) }, 'schedules: worker error'));
  }

  /** Creates or replaces the schedule; a bad cron expression is a 400. */
  async put(record: ScheduleRecord): Promise<void> {
    checkCron(record.cron);
    const previous = await this.records.getSchedule(record.scheduleId);
    // The record first, so the first tick finds it; put back as it was when the cron is refused.
    await this.records.putSchedule(record);
    if (record.isPaused) return;
    try {
      await this.arm(record);
    } catch (err) {
      if (previous) await this.records.putSchedule(previous);
      else await this.records.deleteSchedule(record.scheduleId);
      throw err;
    }
  }

  private async arm(record: ScheduleRecord): Promise<void> {
    const { pattern, tz } = splitCron(record.cron);
    try {
      await this.queue.upsertJobScheduler(
        record.scheduleId,
        { pattern, ...(tz ? { tz } : {}) },
        { name: 'tick', data: { scheduleId: record.scheduleId } },
      );
    } catch (err) {
      throw badRequest(
        `invalid cron expression '${record.cron}': ${(err as Error).message} (example: */5 * * * *, optionally prefixed by CRON_TZ=Europe/Berlin)`,
      );
    }
  }

  async nextTime(scheduleId: string): Promise<number | undefined> {
    const s = await this.queue.getJobScheduler(scheduleId);
    return s?.next ?? undefined;
  }

  async pause(record: ScheduleRecord): Promise<void> {
    await this.queue.removeJobScheduler(record.scheduleId);
    await this.records.putSchedule({ ...record, isPaused: true });
  }

  async resume(record: ScheduleRecord): Promise<void> {
    await this.put({ ...record, isPaused: false });
  }

  async delete(scheduleId: string): Promise<boolean> {
    await this.queue.removeJobScheduler(scheduleId);
    return this.records.deleteSchedule(scheduleId);
  }

  private async tick(scheduleId: string): Promise<void> {
    const record = await this.records.getSchedule(scheduleId);
    if (!record || record.isPaused) return;
    const queueName = record.requestHeaders.find(([n]) => /^(upstash|service)-queue-name$/i.test(n))?.[1];
    try {
      const { results } = await this.publisher.publish({
        destination: record.destination,
        headers: record.requestHeaders,
        body: Buffer.from(record.bodyBase64, 'base64'),
        callerIp: record.callerIp,
        scheduleId,
        ...(queueName ? { queueName } : {}),
      });
      await this.records.startScheduleRun(
        scheduleId,
        results.filter((r) => !r.deduplicated).map((r) => r.messageId),
      );
    } catch (err) {
      // A tick that cannot publish (group deleted, budget reached) is logged; the schedule stays.
      this.log.warn({ scheduleId, err: (err as Error).message }, 'schedule tick not published');
    }
    await this.records.putSchedule({ ...record, lastScheduleTime: Date.now() });
  }

  async stop(): Promise<void> {
    await this.worker.close();
    await this.queue.close();
  }
}

/**
 * The service's crons have minute resolution: five fields (minute hour day-of-month month
 * day-of-week), optionally after CRON_TZ=<zone>. A sixth (seconds) field is refused, not run
 * every second.
 */
export function checkCron(cron: string): void {
  const fields = splitCron(cron).pattern.split(/\s+/).filter(Boolean);
  if (fields.length !== 5)
    throw badRequest(
      `invalid cron expression '${cron.trim()}': it must have 5 fields (minute hour day-of-month month day-of-week), the resolution is 1 minute; example: */5 * * * *`,
    );
}

/** "CRON_TZ=America/New_York 0 9 * * *" → pattern and time zone. */
function splitCron(cron: string): { pattern: string; tz?: string } {
  const m = /^\s*CRON_TZ=(\S+)\s+(.*)$/.exec(cron);
  return m ? { pattern: m[2].trim(), tz: m[1] } : { pattern: cron.trim() };
}
