/**
 * Sealed page positions. With an identity provider, the position a page-filtered verb
 * continues from (`next` of a list page, `cursor` of `changes.list`) is the last row the
 * store examined, which may be a row the caller was denied: in clear it would name a denied
 * key, collection, branch or tag. The gate seals each such position into an opaque token
 * (AES-256-GCM under a key made when the store starts, bound to the verb) and opens it when
 * it comes back as the next request's `after` or `cursor`, so paging stays exactly the
 * engine's (no row repeated or lost, `changes_scan_records` counted as before) while nothing
 * the caller can decode names a row it may not read.
 *
 * A position is bound to the request it continues (the verb and the arguments that choose the
 * range: collection, branch, refs, prefix), not only to the verb: a position that could be
 * given to another range would compare a denied key with keys the caller chose there.
 *
 * A name list's position also carries how many rows before it were denied (name-pages.ts):
 * its pages count them only on the last one, over the whole list.
 */

import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { storeError } from "../errors.ts";

/**
 * Where each page-filtered verb returns its position, the request field it comes back in, and
 * the request fields (with their defaults) that choose the range it is a position in.
 */
const FIELDS: Readonly<
  Record<
    string,
    {
      readonly result: string;
      readonly request: string;
      readonly range: Readonly<Record<string, unknown>>;
      /** The position carries a count of denied rows before it (`COUNT:NAME`). */
      readonly carries?: true;
    }
  >
> = {
  "collections.list": { result: "next", request: "after", range: {}, carries: true },
  "branches.list": {
    result: "next",
    request: "after",
    range: { collection: null },
    carries: true,
  },
  "tags.list": { result: "next", request: "after", range: { collection: null }, carries: true },
  "document.list": {
    result: "next",
    request: "after",
    range: { collection: null, branch: "main", version: null, prefix: "" },
  },
  "changes.list": {
    result: "cursor",
    request: "cursor",
    range: { collection: null, branch: "main", from_branch: null, from: null, to: null },
  },
};

/** The verb and its range's arguments as given (defaults filled in): a sealed box's AAD. */
function boundTo(verb: string, args: unknown): Buffer {
  const range = FIELDS[verb]?.range ?? {};
  const given = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
  const values = Object.entries(range).map(([field, fallback]) => given[field] ?? fallback);
  return Buffer.from(JSON.stringify([verb, ...values]));
}

/** A request's args with its sealed position opened, and whether it chose a position itself. */
export interface Opened {
  readonly args: unknown;
  /** A position in clear, of the caller's own choosing (not one this store sealed). */
  readonly chosen: boolean;
  /** Rows denied before the position, as the name list that sealed it counted them. */
  readonly carried: number;
}

/**
 * A sealed position: `~` then base64url of nonce, tag and ciphertext. `~` is not a name
 * character, nor the first character of an engine cursor (base64url), so only a document key
 * can collide, and only one of this exact shape (read as sealed, as docs/identity.md says).
 */
const SEALED = /^~[A-Za-z0-9_-]{38,}$/;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class PagePositions {
  // Made per store process: a position sealed before a restart is refused `invalid_cursor`.
  readonly #key = randomBytes(32);

  /**
   * The page with its position (if any) sealed, for the request `args` (raw, as sent); a
   * name list's position carries `carried`, the rows denied before it.
   */
  seal(
    verb: string,
    args: unknown,
    page: Record<string, unknown>,
    carried = 0,
  ): Record<string, unknown> {
    const fields = FIELDS[verb];
    const field = fields?.result;
    if (field === undefined || typeof page[field] !== "string") return page;
    // A name holds no ":" (the store's name rule), so the count ends at the first one.
    const plain = fields?.carries === true ? `${carried}:${page[field]}` : (page[field] as string);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, nonce);
    cipher.setAAD(boundTo(verb, args));
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    const token = Buffer.concat([nonce, cipher.getAuthTag(), body]).toString("base64url");
    return { ...page, [field]: `~${token}` };
  }

  /**
   * The raw args with a sealed position opened; other args unchanged (a caller may still
   * start after a position of its own choosing, which the gate may refuse). A sealed position
   * this store did not seal for this verb and range is `invalid_cursor`.
   */
  open(verb: string, args: unknown): Opened {
    const fields = FIELDS[verb];
    const field = fields?.request;
    if (field === undefined || typeof args !== "object" || args === null) {
      return { args, chosen: false, carried: 0 };
    }
    const value = (args as Record<string, unknown>)[field];
    if (value === undefined || value === null) return { args, chosen: false, carried: 0 };
    if (typeof value !== "string" || !SEALED.test(value)) {
      return { args, chosen: true, carried: 0 };
    }
    const plain = this.#opened(verb, args, value);
    if (fields?.carries !== true)
      return { args: { ...args, [field]: plain }, chosen: false, carried: 0 };
    const colon = plain.indexOf(":");
    return {
      args: { ...args, [field]: plain.slice(colon + 1) },
      chosen: false,
      carried: Number(plain.slice(0, colon)),
    };
  }

  #opened(verb: string, args: unknown, token: string): string {
    const box = Buffer.from(token.slice(1), "base64url");
    try {
      const decipher = createDecipheriv(
        "aes-256-gcm",
        this.#key,
        box.subarray(0, NONCE_BYTES),
      ).setAuthTag(box.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
      decipher.setAAD(boundTo(verb, args));
      const plain = Buffer.concat([
        decipher.update(box.subarray(NONCE_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
      return plain.toString("utf8");
    } catch {
      throw storeError(
        "invalid_cursor",
        `the position was not issued to this ${verb} range by this store process; list again from the start`,
      );
    }
  }
}
