// Errors of the queue area, answered as the real service does: a status and {"error": "..."}.
export class QueueError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new QueueError(400, message);
export const notFound = (message: string) => new QueueError(404, message);
