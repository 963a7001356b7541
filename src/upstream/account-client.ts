// HTTP client of Area A (Upstash Developer API, QStash part): production pack and monthly budget of a
// queue instance, with HTTP Basic email:API key. Paths as the real API names them (/qstash/…).
import { RestClient, segment } from './rest-json.js';

export interface AccountClientOptions {
  /** Base URL ending in /v2, e.g. http://127.0.0.1:8079/account/v2 or https://api.upstash.com/v2 */
  url: string;
  email: string;
  apiKey: string;
  timeoutMs?: number;
  connections?: number;
}

export class AccountClient {
  private readonly rest: RestClient;

  constructor(options: AccountClientOptions) {
    this.rest = new RestClient({
      service: 'account service',
      url: options.url,
      authorization: `Basic ${Buffer.from(`${options.email}:${options.apiKey}`).toString('base64')}`,
      timeoutMs: options.timeoutMs ?? 10_000,
      connections: options.connections ?? 2,
    });
  }

  get origin(): string {
    return this.rest.origin;
  }

  disableProdpack(id: string): Promise<unknown> {
    return this.rest.call({ method: 'POST', path: `/qstash/disable-prodpack/${segment(id)}` });
  }

  enableProdpack(id: string): Promise<unknown> {
    return this.rest.call({ method: 'POST', path: `/qstash/enable-prodpack/${segment(id)}` });
  }

  updateBudget(id: string, budget: number): Promise<unknown> {
    return this.rest.call({ method: 'PATCH', path: `/qstash/update-budget/${segment(id)}`, json: { budget } });
  }

  users(): Promise<unknown> {
    return this.rest.call({ method: 'GET', path: '/qstash/users' });
  }

  user(id: string): Promise<unknown> {
    return this.rest.call({ method: 'GET', path: `/qstash/user/${segment(id)}` });
  }

  close(): Promise<void> {
    return this.rest.close();
  }
}
