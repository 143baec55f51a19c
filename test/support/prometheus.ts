/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: every
 * line must be a `# HELP`, a `# TYPE` or a sample of the family last typed; metric and label
 * names must be valid; label values must be correctly quoted and escaped; values must be
 * numbers (or NaN, +Inf, -Inf in any case); a family is typed once, before its samples. Anything else
 * throws, naming the line, so a malformed exposition fails the test that reads it.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
/** Sample suffixes that belong to a histogram or summary family. */
const SUFFIXES: Record<string, readonly string[]> = {
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["_sum", "_count"],
};

function parseValue(text: string, line: number): number {
  // Prometheus reads values with Go's ParseFloat, which takes NaN and Inf in any case
  // (prom-client writes `Nan`).
  if (/^nan$/i.test(text)) return Number.NaN;
  if (/^\+?inf$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text))
    throw new Error(`line ${line}: bad value ${text}`);
  return Number(text);
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`line ${line}: label without =`);
    const name = text.slice(i, eq);
    if (!LABEL.test(name)) throw new Error(`line ${line}: bad label name ${name}`);
    if (Object.hasOwn(labels, name)) throw new Error(`line ${line}: repeated label ${name}`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label value not quoted`);
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\") {
        const next = text[++j];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`line ${line}: bad escape \\${next}`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`line ${line}: unterminated label value`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (i < text.length) throw new Error(`line ${line}: expected , between labels`);
  }
  return labels;
}

function familyOf(sample: string, current: Family | undefined, line: number): Family {
  if (current === undefined) throw new Error(`line ${line}: sample ${sample} before any # TYPE`);
  if (sample === current.name) return current;
  const suffix = (SUFFIXES[current.type] ?? []).find((s) => sample === current.name + s);
  if (suffix === undefined)
    throw new Error(`line ${line}: ${sample} is not of family ${current.name}`);
  return current;
}

export function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const help = new Map<string, string>();
  let current: Family | undefined;
  const lines = text.split("\n");
  if (lines.at(-1) !== "") throw new Error("exposition must end with a newline");
  lines.pop();
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw === "") return;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
    if (meta !== null) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name ${name}`);
      if (kind === "HELP") help.set(name, rest);
      else {
        if (!TYPES.has(rest)) throw new Error(`line ${line}: bad type ${rest}`);
        if (families.has(name)) throw new Error(`line ${line}: ${name} typed twice`);
        current = { name, type: rest, help: help.get(name) ?? "", samples: [] };
        families.set(name, current);
      }
      return;
    }
    if (raw.startsWith("#")) return;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(raw);
    if (sample === null) throw new Error(`line ${line}: not a sample: ${raw}`);
    const [, name, labels, value] = sample as unknown as [
      string,
      string,
      string | undefined,
      string,
    ];
    familyOf(name, current, line).samples.push({
      name,
      labels: labels === undefined ? {} : parseLabels(labels, line),
      value: parseValue(value, line),
    });
  });
  return families;
}

/** The value of one sample: `name` with exactly the given labels (others ignored when absent). */
export function sampleValue(
  families: Map<string, Family>,
  family: string,
  sample: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = families
    .get(family)
    ?.samples.find(
      (s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    );
  return found?.value;
}
