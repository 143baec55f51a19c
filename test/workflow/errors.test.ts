import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import {
  ATTEMPT_FAILURES,
  attemptFailure,
  CATALOGUE,
  CLI_FAILURES,
  cliFailure,
  ENGINE_FAULTS,
  ERRORS,
  engineFault,
  RUN_FAILURES,
  runFailure,
  STREAM_REFUSALS,
  SUPERVISION_FAILURES,
  streamRefusal,
  supervisionFailure,
  workflowError,
} from "../../src/workflow/errors.ts";
import { documentedCodes, documentedRow } from "../support/doc-tables.ts";

describe("workflow error catalogue", () => {
  test("every code is documented in docs/http-api.md with its status", async () => {
    const doc = await readFile(new URL("../../docs/http-api.md", import.meta.url), "utf8");
    for (const [code, status] of Object.entries(ERRORS)) {
      const row = new RegExp(`^\\|\\s*\`${code}\`\\s*\\|\\s*(${status}|—)\\s*\\|`, "m");
      assert.match(doc, row, `docs/http-api.md lists ${code}`);
    }
  });

  test("a catalogue error carries the catalogue's status", () => {
    for (const [code, status] of Object.entries(ERRORS)) {
      const error = workflowError(code as keyof typeof ERRORS, "m");
      assert.deepEqual(
        [error.code, error.status, error.toJSON()],
        [code, status, { code, message: "m" }],
      );
    }
  });
});

/** A row of SECTIONS; `make` raises a code of the section through its constructor. */
function section<C extends string>(
  names: readonly string[],
  codes: Readonly<Record<C, unknown>>,
  doc: string,
  heading: string,
  construct: (code: C, message: string) => { readonly code: string },
) {
  return { section: names, codes, doc, heading, make: (code: string) => construct(code as C, "m") };
}

/** Each section of the catalogue, the doc table that lists it, and its constructor. */
const SECTIONS = [
  section(["http", "startup"], ERRORS, "docs/http-api.md", "### Error codes", workflowError),
  section(["run"], RUN_FAILURES, "docs/workflows.md", "### Run failure codes", runFailure),
  section(
    ["attempt"],
    ATTEMPT_FAILURES,
    "docs/workflows.md",
    "### Attempt failures the server records",
    attemptFailure,
  ),
  section(["stream"], STREAM_REFUSALS, "docs/workers.md", "### Stream refusals", streamRefusal),
  section(["engine"], ENGINE_FAULTS, "docs/engine.md", "## Engine faults", engineFault),
  section(
    ["supervision"],
    SUPERVISION_FAILURES,
    "docs/deployments.md",
    "### Supervision failures",
    supervisionFailure,
  ),
  section(
    ["cli"],
    CLI_FAILURES,
    "docs/workflow-server.md",
    "### Command-line failures",
    cliFailure,
  ),
];

describe("every section of the catalogue matches its doc table, both ways", () => {
  test("every section has a doc table", () => {
    const covered = SECTIONS.flatMap((s) => s.section).sort();
    assert.deepEqual(covered, Object.keys(CATALOGUE).sort());
  });
  for (const { section, codes, doc, heading, make } of SECTIONS) {
    const documented = documentedCodes(doc, heading);
    for (const code of Object.keys(codes)) {
      test(`${section.join("/")} code ${code} is documented in ${doc}`, () =>
        assert.ok(documented.includes(code), `${doc} "${heading}" lists ${code}`));
      test(`${section.join("/")} code ${code} is raised with its code by its constructor`, () =>
        assert.equal(make(code).code, code));
    }
    for (const code of documented) {
      test(`${code}, documented in ${doc} "${heading}", is in the catalogue`, () =>
        assert.ok(Object.hasOwn(codes, code), `${code} is declared in src/workflow/errors.ts`));
    }
  }
});

describe("stream refusals", () => {
  for (const [code, status] of Object.entries(STREAM_REFUSALS)) {
    test(`${code} ends the stream with gRPC ${status}, as docs/workers.md says`, () => {
      const refusal = streamRefusal(code as keyof typeof STREAM_REFUSALS, "m");
      assert.equal(typeof grpc.status[refusal.grpcStatus], "number");
      assert.equal(
        documentedRow("docs/workers.md", "### Stream refusals", code)?.[1],
        `\`${status}\``,
      );
    });
  }
});

describe("statuses in the doc tables", () => {
  for (const [code, status] of Object.entries({ ...ENGINE_FAULTS })) {
    test(`engine fault ${code} is documented with ${status}`, () => {
      assert.equal(documentedRow("docs/engine.md", "## Engine faults", code)?.[1], String(status));
      assert.equal(engineFault(code as keyof typeof ENGINE_FAULTS, "m").status, status);
    });
  }
  for (const code of ["server_unreachable", "record_file_unreadable"] as const) {
    test(`command-line failure ${code} is documented with ${CLI_FAILURES[code]}`, () =>
      assert.equal(
        documentedRow("docs/workflow-server.md", "### Command-line failures", code)?.[1],
        String(CLI_FAILURES[code]),
      ));
  }
});
