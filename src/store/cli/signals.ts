/**
 * Waiting for the signal that stops a long-running command: SIGINT or SIGTERM, whichever
 * comes first. The handlers are removed once one fires, so a second signal during shutdown
 * falls back to Node's default (immediate exit).
 */

export function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((done) => {
    const on = (signal: NodeJS.Signals) => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      done(signal);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });
}
