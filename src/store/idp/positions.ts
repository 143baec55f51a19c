/**
 * Sealed page positions. With an identity provider, the position a page-filtered verb
 * continues from (`next` of a list page, `cursor` of `changes.list`) is the last row the
 * store examined, which may be a row the caller was denied: in clear it would name a denied
 * key, collection, branch or tag. The gate seals each such position into an opaque token
 * (AES-256-GCM under a key made when the store starts, bound to the verb) and opens it when
 * it comes back as the next request's `after` or `cursor`, so paging stays exactly the
 * engine's (no row repeated or lost, `changes_scan_records` counted as before) while nothing
 * the caller can decode names a row it may not read.
 */

import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { storeError } from "../errors.ts";

/** Where each page-filtered verb returns its position, and the request field it comes back in. */
const FIELDS: Readonly<Record<string, { readonly result: string; readonly request: string }>> = {
  "collections.list": { result: "next", request: "after" },
  "branches.list": { result: "next", request: "after" },
  "tags.list": { result: "next", request: "after" },
  "document.list": { result: "next", request: "after" },
  "changes.list": { result: "cursor", request: "cursor" },
};

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

  /** The page with its position (if any) sealed. */
  seal(verb: string, page: Record<string, unknown>): Record<string, unknown> {
    const field = FIELDS[verb]?.result;
    if (field === undefined || typeof page[field] !== "string") return page;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, nonce);
    cipher.setAAD(Buffer.from(verb));
    const body = Buffer.concat([cipher.update(page[field] as string, "utf8"), cipher.final()]);
    const token = Buffer.concat([nonce, cipher.getAuthTag(), body]).toString("base64url");
    return { ...page, [field]: `~${token}` };
  }

  /**
   * The raw args with a sealed position opened; other args unchanged (a caller may still
   * start after a position of its own choosing). A sealed position this store did not seal
   * for this verb is `invalid_cursor`.
   */
  open(verb: string, args: unknown): unknown {
    const field = FIELDS[verb]?.request;
    if (field === undefined || typeof args !== "object" || args === null) return args;
    const value = (args as Record<string, unknown>)[field];
    if (typeof value !== "string" || !SEALED.test(value)) return args;
    return { ...args, [field]: this.#opened(verb, value) };
  }

  #opened(verb: string, token: string): string {
    const box = Buffer.from(token.slice(1), "base64url");
    try {
      const decipher = createDecipheriv(
        "aes-256-gcm",
        this.#key,
        box.subarray(0, NONCE_BYTES),
      ).setAuthTag(box.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
      decipher.setAAD(Buffer.from(verb));
      const plain = Buffer.concat([
        decipher.update(box.subarray(NONCE_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
      return plain.toString("utf8");
    } catch {
      throw storeError(
        "invalid_cursor",
        `the position was not issued to ${verb} by this store process; list again from the start`,
      );
    }
  }
}
