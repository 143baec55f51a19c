/**
 * `npm run bench:embed`: the embedding worker and walk with the generated test model, with
 * the same generator's BERT-shaped model (384 dimensions and one encoder layer: a model
 * whose cost per text is a real small model's, so the walk is bound by the model as it is
 * in use, not by the store), and with the model in SKEIN_BENCH_MODEL_DIR when set, which
 * must hold a manifest.json.
 *
 * - texts/s through the document worker at batch sizes 1, 8 and 32 (short texts);
 * - the walk's throughput, records embedded and committed per second, on 100,000 records
 *   (20,000 with the BERT-shaped model), beside the same texts embedded in this process by the worker's own code (onnxruntime
 *   with no pipe, pages or commits) in the same run: the walk's share of the model's speed;
 * - a question's latency (p50/p99) while a walk runs, with the question worker on and off,
 *   beside the same questions with no walk.
 *
 * The store, its socket server, the service and the walk run in this process as in
 * `serve`; the workers are the shipped bin/skein-embed-worker. Nothing is asserted.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { silentLogger } from "../src/common/log.ts";
import type { EmbedSettings } from "../src/store/config/types.ts";
import { manifestIdentity, readManifest } from "../src/store/embed/manifest.ts";
import { EmbedService } from "../src/store/embed/service.ts";
import { enableField, fieldStatus } from "../src/store/embed/verbs.ts";
import { embedTexts, loadModel } from "../src/store/embed/worker-main.ts";
import { startMessage } from "../src/store/embed/worker-process.ts";
import type { Store } from "../src/store/engine/index.ts";
import { writeTestModel } from "../test/store/embed/test-model.ts";
import { type BenchCase, type Figures, knob, percentile, runBench } from "./harness.ts";
import { benchEmbedSettings } from "./support/embed-settings.ts";
import { filledStore } from "./support/filled-store.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/store/embed", "bin/skein-embed-worker"];

const WORKER = fileURLToPath(new URL("../bin/skein-embed-worker", import.meta.url));
/** Seconds each texts/s case runs. */
const RATE_SECONDS = knob("BENCH_RATE_SECONDS", 2, 0.2);
const WALK_RECORDS = knob("BENCH_WALK_RECORDS", 100_000, 500);
/** Records of the BERT-shaped model's walk: it embeds about 1,500 texts/s on one thread. */
const LAYERED_WALK_RECORDS = knob("BENCH_LAYERED_WALK_RECORDS", 20_000, 200);
/** Encoder layers of the BERT-shaped model. */
const LAYERS = knob("BENCH_EMBED_LAYERS", 1, 1);
/** Records of the walks the question latency is measured against. */
const LATENCY_WALK_RECORDS = knob("BENCH_LATENCY_WALK_RECORDS", 20_000, 300);
const QUESTIONS = knob("BENCH_QUESTIONS", 200, 10);

const root = mkdtempSync(join(tmpdir(), "skein-bench-embed-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

const WORDS =
  "the store branch version model vector search document question words text of and to in is it that on for with as".split(
    " ",
  );
const text = (i: number) =>
  Array.from({ length: 12 }, (_, j) => WORDS[(i * 31 + j * 7) % WORDS.length]).join(" ");

function settings(dir: string, identity: string, questionWorker: boolean): EmbedSettings {
  return benchEmbedSettings(WORKER, dir, identity, { embed_question_worker: questionWorker });
}

async function started(s: EmbedSettings): Promise<EmbedService> {
  const service = await EmbedService.start(s, silentLogger());
  if (service.failure !== undefined) throw service.failure;
  return service;
}

function rateCase(label: string, s: EmbedSettings, batch: number): BenchCase {
  return {
    name: `${label}: texts/s at batch ${batch}`,
    async run() {
      const service = await started({ ...s, embed_question_worker: false });
      const texts = Array.from({ length: batch }, (_, i) => text(i));
      await service.embed("document", texts);
      let done = 0;
      const start = performance.now();
      while (performance.now() - start < RATE_SECONDS * 1000) {
        await service.embed("document", texts);
        done += batch;
      }
      const seconds = (performance.now() - start) / 1000;
      await service.close();
      return { texts_per_s: Math.round(done / seconds), texts: done };
    },
  };
}

function freshStore(name: string, records: number): Promise<Store> {
  return filledStore(join(root, name), records, (i) => ({ text: text(i), n: i }), 64 << 20);
}

async function walkUntilDone(store: Store, service: EmbedService): Promise<number> {
  const start = performance.now();
  enableField(store, service, "notes", "text");
  service.startWalk(store);
  while (fieldStatus(store, service, "notes").pending > 0) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return (performance.now() - start) / 1000;
}

/**
 * The worker's own tokenising, graph run and pooling (worker-main's code) in this process,
 * in batches of embed_batch_items over the walk's texts: what the walk would reach if the
 * pipe, the pages and the commits cost nothing.
 */
async function referenceTextsPerS(s: EmbedSettings, records: number): Promise<number> {
  const model = await loadModel(s.embed_model_dir, startMessage(s));
  const batch = Number(s.embed_batch_items);
  const start = performance.now();
  for (let at = 0; at < records; at += batch) {
    const texts = Array.from({ length: Math.min(batch, records - at) }, (_, i) => text(at + i));
    await embedTexts(model, "document", texts);
  }
  const seconds = (performance.now() - start) / 1000;
  await model.session.release();
  return Math.round(records / seconds);
}

/** The walk beside the in-process reference on the same texts, in the same run. */
function walkCase(label: string, s: EmbedSettings, records: number): BenchCase {
  return {
    name: `${label}: walk of ${records} records against in-process onnxruntime`,
    async run() {
      const reference = await referenceTextsPerS(s, records);
      const store = await freshStore(`walk-${label}`, records);
      const service = await started({ ...s, embed_question_worker: false });
      const seconds = await walkUntilDone(store, service);
      await service.close();
      await store.close();
      const walk = records / seconds;
      return {
        records_per_s: Math.round(walk),
        seconds: Number(seconds.toFixed(1)),
        reference_texts_per_s: reference,
        walk_to_reference: Number((walk / reference).toFixed(2)),
      };
    },
  };
}

async function questionLatencies(
  service: EmbedService,
  until?: Promise<unknown>,
): Promise<number[]> {
  const samples: number[] = [];
  let over = false;
  void until?.then(() => {
    over = true;
  });
  for (let i = 0; i < QUESTIONS && !over; i++) {
    const start = performance.now();
    await service.embed("question", [text(i)]);
    samples.push(performance.now() - start);
  }
  return samples;
}

function latencyCase(label: string, s: EmbedSettings, questionWorker: boolean): BenchCase {
  return {
    name: `${label}: question latency, question worker ${questionWorker ? "on" : "off"}`,
    async run(): Promise<Figures> {
      const store = await freshStore(`latency-${label}-${questionWorker}`, LATENCY_WALK_RECORDS);
      const service = await started({ ...s, embed_question_worker: questionWorker });
      const idle = await questionLatencies(service);
      const walk = walkUntilDone(store, service);
      const busy = await questionLatencies(service, walk);
      await walk;
      await service.close();
      await store.close();
      return {
        idle_p50_ms: percentile(idle, 50),
        idle_p99_ms: percentile(idle, 99),
        walk_p50_ms: percentile(busy, 50),
        walk_p99_ms: percentile(busy, 99),
        questions_during_walk: busy.length,
      };
    },
  };
}

const models: { label: string; settings: EmbedSettings; walkRecords: number }[] = [];
const generated = await writeTestModel(join(root, "model"), { dims: 32, maxTokens: 128 });
models.push({
  label: "generated",
  settings: settings(generated.dir, generated.identity, true),
  walkRecords: WALK_RECORDS,
});
const layered = await writeTestModel(join(root, "layered-model"), {
  dims: 384,
  maxTokens: 128,
  layers: LAYERS,
});
models.push({
  label: `BERT-shaped (384 dims, ${LAYERS} layer${LAYERS === 1 ? "" : "s"})`,
  settings: settings(layered.dir, layered.identity, true),
  walkRecords: LAYERED_WALK_RECORDS,
});
const real = process.env.SKEIN_BENCH_MODEL_DIR;
if (real !== undefined && real !== "") {
  const identity = manifestIdentity(await readManifest(real));
  models.push({
    label: "model dir",
    settings: settings(real, identity, true),
    walkRecords: WALK_RECORDS,
  });
}

const cases: BenchCase[] = [];
for (const { label, settings: s } of models) {
  for (const batch of [1, 8, 32]) cases.push(rateCase(label, s, batch));
}
for (const { label, settings: s, walkRecords } of models) {
  cases.push(walkCase(label, s, walkRecords));
}
cases.push(latencyCase("generated", models[0]!.settings, true));
cases.push(latencyCase("generated", models[0]!.settings, false));
await runBench("embed", { measures: MEASURES }, cases);
