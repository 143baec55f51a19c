/**
 * Waiting for the signal that stops a long-running command: SIGINT or SIGTERM, whichever
 * comes first. A command arms the wait before it starts listening (a signal that arrives as
 * soon as the socket appears must still stop it cleanly) and disposes of it if start-up
 * fails. The handlers are removed once one fires, so a second signal during shutdown falls
 * back to Node's default (immediate exit).
 */

export interface StopWait {
  readonly stopped: Promise<unknown>;
  dispose(): void;
}

export function stopSignal(): StopWait {
  let on: ((signal: NodeJS.Signals) => void) | undefined;
  const dispose = () => {
    if (on === undefined) return;
    process.off("SIGINT", on);
    process.off("SIGTERM", on);
    on = undefined;
  };
  const stopped = new Promise<NodeJS.Signals>((done) => {
    on = (signal) => {
      dispose();
      done(signal);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });
  return { stopped, dispose };
}

/** A stop wait on any promise (tests and embedders that stop a command themselves). */
export function stopWhen(until: () => Promise<unknown>): StopWait {
  return { stopped: until(), dispose: () => undefined };
}
