// A role serves until SIGINT (Ctrl+C) or SIGTERM, then stops what it started. Roles call it before
// printing their banner: a script that sends SIGTERM as soon as it reads the banner would otherwise
// reach a process with no handler, which Node ends at once, leaving its stores behind.
export function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
