/**
 * A histogram with one label, observed once per durable step (`skein_activity_seconds`):
 * prom-client's `observe` validates and hashes the label object and allocates on every
 * call (about 0.5 µs, measured in the server's profile), so this one keeps a series per
 * label value, found in a small map, and counts into a typed array. It registers with the
 * same prom-client registry and answers `get()` in prom-client's histogram shape, so the
 * exposition text is the same as a prom-client `Histogram`'s for the same observations
 * (test/workflow/metrics/histogram.test.ts compares them).
 */

import type { Metric, Registry } from "prom-client";

/** One sample line, as prom-client's histograms give them (buckets carry `exemplar`). */
interface Sample {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName: string;
  readonly exemplar?: null;
}

interface Series {
  /** Observations per bucket (not cumulative); the last slot is past the largest bound. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

export interface HistogramOptions<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelName: L;
  readonly buckets: readonly number[];
  readonly registers: readonly Registry[];
}

export class OneLabelHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #label: L;
  readonly #bounds: readonly number[];
  #series = new Map<string, Series>();

  constructor(options: HistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.#label = options.labelName;
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
    // The registry needs only what prom-client's own metrics expose to it: the name, the
    // type, `get` and `reset`.
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** One observation for the label value; a value that is not a finite number is ignored. */
  observe(labelValue: string, value: number): void {
    if (!Number.isFinite(value)) return;
    let series = this.#series.get(labelValue);
    if (series === undefined) {
      series = { counts: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 };
      this.#series.set(labelValue, series);
    }
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    series.counts[i]!++;
    series.sum += value;
    series.count++;
  }

  reset(): void {
    this.#series = new Map();
  }

  /** The series in prom-client's histogram shape (cumulative buckets, `+Inf`, sum, count). */
  async get(): Promise<{
    name: string;
    help: string;
    type: "histogram";
    aggregator: "sum";
    values: Sample[];
  }> {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const [labelValue, series] of this.#series) {
      let acc = 0;
      this.#bounds.forEach((le, i) => {
        acc += series.counts[i]!;
        values.push({
          labels: { le, [this.#label]: labelValue },
          value: acc,
          metricName: bucket,
          exemplar: null,
        });
      });
      values.push(
        {
          labels: { le: "+Inf", [this.#label]: labelValue },
          value: series.count,
          metricName: bucket,
          exemplar: null,
        },
        {
          labels: { [this.#label]: labelValue },
          value: series.sum,
          metricName: `${this.name}_sum`,
        },
        {
          labels: { [this.#label]: labelValue },
          value: series.count,
          metricName: `${this.name}_count`,
        },
      );
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    };
  }
}
