/**
 * Structured logging. Every process logs JSON lines through pino (one object per event,
 * cheap on the hot path); when stderr is a terminal the same events are rendered readably.
 * Secrets never go into a log: callers log names and ids, and the redaction list below is a
 * second line of defence for the field names that carry credentials.
 */

import { type Logger, pino } from "pino";
import pretty from "pino-pretty";

export type { Logger };

const REDACT = [
  "authorization",
  "token",
  "secret",
  "password",
  "*.authorization",
  "*.token",
  "*.secret",
  "*.password",
  "req.headers.authorization",
  "req.headers.cookie",
];

export interface LogOptions {
  readonly name: string;
  readonly level?: string;
  /** Where to write; defaults to stderr (fd 2) so stdout stays for a command's output. */
  readonly destination?: NodeJS.WritableStream;
  /** Force readable output on or off; defaults to "stderr is a TTY". */
  readonly pretty?: boolean;
}

export function createLogger(options: LogOptions): Logger {
  const base = {
    name: options.name,
    level: options.level ?? process.env.SKEIN_LOG_LEVEL ?? "info",
    redact: { paths: REDACT, censor: "[redacted]" },
  };
  const readable = options.pretty ?? process.stderr.isTTY === true;
  if (readable) {
    return pino(
      base,
      pretty({ destination: options.destination ?? 2, colorize: true, sync: true }),
    );
  }
  return pino(base, options.destination ?? pino.destination({ dest: 2, sync: false }));
}

/** A logger that drops everything: for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
