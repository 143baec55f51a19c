/**
 * The driver: the one piece of code of ours inside each query's QuickJS runtime. It runs
 * the query's function over a batch of records (an array the sandbox has just built from
 * the batch's binary form, binary-json.ts, and that nothing else refers to; or the batch's
 * JSON text, which it parses, when the text was not transcoded) and serializes
 * the outputs, with the per-record output and depth bounds enforced where the outputs are
 * made.
 */

/**
 * Captures the intrinsics it uses when the runtime is made, before any query code runs (a
 * query's code can run statements while it is compiled: `(Array.prototype.push = null, f)`),
 * and uses no prototype method, so a query that replaces them still has its outputs
 * gathered; whatever else it breaks is its own sandbox's. Throws a marked object when one
 * record has more outputs than allowed, or an output nests deeper than QUERY_OUTPUT_DEPTH.
 *
 * The depth is measured by the replacer of the one `stringify` that serializes the batch,
 * on what is actually serialized (after `toJSON`, getters and proxies), and refused before
 * stringify descends further: QuickJS's stringify recurses on the WebAssembly stack, which
 * is the host's, and its own stack check does not see it, so a deep enough output overflows
 * the worker's stack instead of failing inside the sandbox. A walk before stringify would be
 * neither cheaper nor sound (a getter can answer it shallow and stringify deep). Stringify
 * calls the replacer depth first with each value's holder, so the path is a stack popped
 * back to the holder; it is a null-prototype object, which no query's setter on
 * Array.prototype can reach.
 */
export const DRIVER = `(function () {
  "use strict";
  const parse = JSON.parse, stringify = JSON.stringify, isArray = Array.isArray;
  const create = Object.create;
  return function (fn, argsJson, maxOutputs, maxDepth) {
    const args = parse(argsJson);
    // The batch array, a row, then the output: the output's first level is the path's third.
    const deepest = maxDepth + 2;
    return function (input) {
      const records = typeof input === "string" ? parse(input) : input;
      const rows = [];
      for (let i = 0; i < records.length; i++) {
        const out = fn(records[i], args);
        if (out === undefined) continue;
        if (isArray(out)) {
          if (out.length > maxOutputs) throw { skeinLimit: "output", index: i, count: out.length };
          for (let j = 0; j < out.length; j++) rows[rows.length] = [i, out[j]];
        } else rows[rows.length] = [i, out];
      }
      const path = create(null);
      let top = -1;
      return stringify(rows, function (key, value) {
        if (top < 0) path[top = 0] = this;
        else while (top > 0 && path[top] !== this) top--;
        if (typeof value === "object" && value !== null) {
          if (++top > deepest) throw { skeinLimit: "depth" };
          path[top] = value;
        }
        return value;
      });
    };
  };
})()`;
