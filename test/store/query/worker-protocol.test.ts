import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { encodeBatchFrame, encodeJsonFrame } from "../../../src/store/query/frames.ts";
import { QueryWorkerProcess } from "../../../src/store/query/worker-process.ts";
import { WORKER } from "./fixture.ts";

describe("the shipped worker speaks the documented protocol", async () => {
  const worker = await QueryWorkerProcess.start(WORKER, 1 << 20);
  after(() => worker.kill("test over"));
  const compile = (code: string) =>
    worker.send({
      type: "compile",
      id: worker.id(),
      code,
      args_json: '{"min":1}',
      time_ms: 5000,
      memory_bytes: 16 << 20,
      outputs_per_record: 2,
    });
  const end = () => worker.send({ type: "end", id: worker.id() });
  const records = [
    { key: "a", value: { n: 1 } },
    { key: "b", value: { n: 2 } },
  ];

  test("a batch in the store's exact layout and one laid out otherwise give the same rows", async () => {
    assert.equal(
      (await compile("(r, a) => r.value.n > a.min ? [r.key, r.value.n] : undefined")).type,
      "compiled",
    );
    const exact = await worker.post(
      encodeBatchFrame(
        worker.id(),
        records.map((r) => [r.key, JSON.stringify(r.value)]),
      ),
    );
    const spaced = await worker.post(
      encodeJsonFrame(JSON.stringify({ records, id: worker.id(), type: "batch" }, null, 1)),
    );
    assert.deepEqual(exact, {
      type: "outputs",
      id: (exact as { id: number }).id,
      rows: [
        [1, "b"],
        [1, 2],
      ],
    });
    assert.equal(spaced.type, "outputs");
    assert.deepEqual((spaced as { rows: unknown }).rows, [
      [1, "b"],
      [1, 2],
    ]);
    assert.equal((await end()).type, "ended");
  });

  test("batches sent behind a failed compile get its error, then the worker takes the next query", async () => {
    const compiled = compile("not a function(");
    const batch = worker.post(encodeBatchFrame(worker.id(), [["a", "1"]]));
    assert.equal((await compiled).type, "error");
    const answer = await batch;
    assert.equal(answer.type, "error");
    assert.equal((answer as { code: string }).code, "query_code_error");
    assert.equal((await end()).type, "ended");
    assert.equal((await compile("(r) => r.key")).type, "compiled");
    const rows = await worker.post(encodeBatchFrame(worker.id(), [["k", "1"]]));
    assert.deepEqual((rows as { rows: unknown }).rows, [[0, "k"]]);
    assert.equal((await end()).type, "ended");
  });
});
