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

/**
 * Fastify's `childLoggerFactory` for servers with many small requests: a request's child
 * logger is made on its first line, not with the request. A pino child binds its fields
 * through the redaction's wildcard paths, about 4 µs a request, and most requests log
 * nothing.
 */
export function lazyChildLogger(
  logger: Logger,
  bindings: Record<string, unknown>,
  options: Record<string, unknown>,
): Logger {
  return new LazyChild(logger, bindings, options) as unknown as Logger;
}

class LazyChild {
  readonly #parent: Logger;
  readonly #bindings: Record<string, unknown>;
  readonly #options: Record<string, unknown>;
  #made: Logger | undefined;

  constructor(parent: Logger, bindings: Record<string, unknown>, options: Record<string, unknown>) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #child(): Logger {
    this.#made ??= this.#parent.child(this.#bindings, this.#options);
    return this.#made;
  }

  static {
    // The level methods, each passing its arguments on to the child's (pino's need it as this).
    for (const level of ["fatal", "error", "warn", "info", "debug", "trace"] as const) {
      Object.defineProperty(LazyChild.prototype, level, {
        value(this: LazyChild, ...args: unknown[]): void {
          const child = this.#child();
          Reflect.apply(child[level], child, args);
        },
      });
    }
  }

  get level(): string {
    return this.#child().level;
  }
  set level(level: string) {
    this.#child().level = level;
  }
  silent(): void {}
  child(bindings: Record<string, unknown>, options?: Record<string, unknown>): Logger {
    return this.#child().child(bindings, options);
  }
  isLevelEnabled(level: string): boolean {
    return this.#child().isLevelEnabled(level);
  }
  bindings(): Record<string, unknown> {
    return this.#child().bindings();
  }
}
