// A role serves until SIGINT (Ctrl+C) or SIGTERM, then stops what it started.
export function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
