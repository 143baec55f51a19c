/**
 * Synthetic clustered vectors for `bench:search`: `CLUSTERS` random unit centres in
 * `DIMS` dimensions, and for each (cluster, seed) a point at the centre plus Gaussian noise,
 * normalised. A text names its point as `c<cluster> s<seed>` (documents) or
 * `c<cluster> q<seed>` (questions); the rest of the text is words for the keyword index.
 */

import { mulberry32 } from "../../test/store/embed/test-model.ts";

export const DIMS = 384;
export const CLUSTERS = 1000;
/** Noise per dimension relative to a unit centre: neighbours are close but distinct. */
const NOISE = 0.6 / Math.sqrt(DIMS);

function gaussians(seed: number, count: number): Float32Array {
  const next = mulberry32(seed);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const u = Math.max(next(), 1e-12);
    const v = next();
    const r = Math.sqrt(-2 * Math.log(u));
    out[i] = r * Math.cos(2 * Math.PI * v);
    if (i + 1 < count) out[i + 1] = r * Math.sin(2 * Math.PI * v);
  }
  return out;
}

function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  const s = 1 / Math.sqrt(n);
  for (let i = 0; i < v.length; i++) v[i] = v[i]! * s;
  return v;
}

const centres = new Map<number, Float32Array>();
function centre(cluster: number): Float32Array {
  let c = centres.get(cluster);
  if (c === undefined) {
    c = normalise(gaussians(1_000_003 * (cluster + 1), DIMS));
    centres.set(cluster, c);
  }
  return c;
}

/** The point a text names (a zero-noise centre when it names none). */
export function vectorOf(text: string): Float32Array {
  const m = /c(\d+) ([sq])(\d+)/.exec(text);
  const cluster = m ? Number(m[1]) % CLUSTERS : 0;
  const seed = m ? Number(m[3]) * 2 + (m[2] === "q" ? 1 : 0) : 0;
  const noise = gaussians(seed + 7919, DIMS);
  const c = centre(cluster);
  const v = new Float32Array(DIMS);
  for (let i = 0; i < DIMS; i++) v[i] = c[i]! + noise[i]! * NOISE;
  return normalise(v);
}

/** Words of a cluster's topic, for keyword search. */
export function topicWords(cluster: number, seed: number): string {
  const next = mulberry32(cluster * 31 + seed);
  return Array.from({ length: 8 }, () => `w${Math.floor(next() * 5000)}`).join(" ");
}
