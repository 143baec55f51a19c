/**
 * The command-line skeleton shared by `skein` and `skein-store`: a program is a name, a
 * version and a table of subcommands; `--help` and `--version` are answered here, and any
 * usage mistake (unknown subcommand, unknown option, missing argument) becomes one line on
 * stderr and exit status 2. Subcommands parse their own options with `parseOptions`, which
 * wraps node:util's strict parseArgs so its errors read the same way.
 */

import { type ParseArgsConfig, parseArgs } from "node:util";
import { watchLauncher } from "./parent-watch.ts";

/** A mistake in how the program was called: one line, exit status 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** True when `out` is a terminal (tables and colour instead of JSON). */
  readonly tty?: boolean;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith("\n") ? text : `${text}\n`),
  tty: process.stdout.isTTY === true,
};

export interface Command {
  readonly name: string;
  readonly summary: string;
  /** Usage lines after the program and command name, and the options, for `CMD --help`. */
  readonly help: string;
  /** Its subcommand words (`namespace create|list|…`), for shell completion. */
  readonly verbs?: readonly string[];
  /** Runs the command; resolves to the exit status. Throws UsageError for usage mistakes. */
  run(args: readonly string[], io: Io): Promise<number>;
}

export interface Program {
  readonly name: string;
  readonly version: string;
  readonly summary: string;
  readonly commands: readonly Command[];
}

export function programHelp(program: Program): string {
  const width = Math.max(...program.commands.map((c) => c.name.length), 4);
  const lines = program.commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  if (lines.length === 0) lines.push("  (none in this build)");
  return [
    `${program.name} ${program.version}: ${program.summary}`,
    "",
    `Usage: ${program.name} <command> [options]`,
    "",
    "Commands:",
    ...lines,
    "",
    "Options:",
    "  --help     show this help, or a command's help after its name",
    "  --version  print the version",
    "",
  ].join("\n");
}

/** Runs `program` on `argv` (without node and the script); resolves to the exit status. */
export async function runProgram(
  program: Program,
  argv: readonly string[],
  io: Io = processIo,
): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === undefined) {
      io.err(programHelp(program));
      return 2;
    }
    if (first === "--help" || first === "-h" || first === "help") {
      io.out(programHelp(program));
      return 0;
    }
    if (first === "--version" || first === "-V") {
      io.out(program.version);
      return 0;
    }
    if (first.startsWith("-")) throw new UsageError(`unknown option ${first}`);
    const command = program.commands.find((c) => c.name === first);
    if (command === undefined) {
      throw new UsageError(`unknown command ${JSON.stringify(first)}; see ${program.name} --help`);
    }
    if (rest.includes("--help") || rest.includes("-h")) {
      io.out(`Usage: ${program.name} ${command.name} ${command.help}`);
      return 0;
    }
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${program.name}: ${error.message}`);
      return 2;
    }
    throw error;
  }
}

/** Strict option parsing: unknown options and bad values become UsageErrors. */
export function parseOptions<const T extends ParseArgsConfig["options"]>(
  args: readonly string[],
  options: T,
  positionals: { min?: number; max?: number } = {},
) {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
  >;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0]! : String(error);
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/, ""));
  }
  const count = parsed.positionals.length;
  if (positionals.min !== undefined && count < positionals.min) {
    throw new UsageError(`expected at least ${positionals.min} argument(s), found ${count}`);
  }
  if (positionals.max !== undefined && count > positionals.max) {
    throw new UsageError(
      `unexpected argument ${JSON.stringify(parsed.positionals[positionals.max])}`,
    );
  }
  return parsed;
}

/**
 * The entry point's last step: run, then exit with the status (errors are printed once).
 * Started through npx or npm exec, the program stops (SIGTERM to itself, after a line on
 * stderr saying so) when npm is gone.
 */
export function main(program: Program): void {
  const launcher = watchLauncher(program.name);
  runProgram(program, process.argv.slice(2))
    .finally(() => launcher?.stop())
    .then(
      (status) => {
        process.exitCode = status;
      },
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        process.stderr.write(`${program.name}: ${message}\n`);
        process.exitCode = 1;
      },
    );
}
