/**
 * The cursor of `POST /workflows/list` pages and the order it carries. A cursor is the last
 * listed run's position (start time, run id) as base64url JSON: `[startedAt, runId]` for an
 * oldest-first list (the form cursors had before lists had an order, so those still work) and
 * `[startedAt, runId, "newest"]` for a newest-first one. The cursor carries its order, so a
 * client that sends only the cursor continues in the order of the page that gave it; a body
 * whose `order` contradicts its cursor is refused with `invalid_cursor`, never answered in a
 * different order than it asked for.
 */

import { type Decoder, oneOf, string } from "../../common/decode/index.ts";
import { workflowError } from "../errors.ts";
import { RUN_ORDERS, type RunOrder, type RunPosition } from "../persistence/workflows.ts";

export interface RunCursor {
  readonly position: RunPosition;
  readonly order: RunOrder;
}

/** The body's `order`: absent means the cursor's, or "oldest" without a cursor. */
export const runOrder: Decoder<RunOrder> = {
  ...oneOf(RUN_ORDERS),
  schema: {
    type: "string",
    enum: [...RUN_ORDERS],
    description:
      'by start time, then run id: "oldest" first (the default) or "newest" first; ' +
      "absent with a cursor: the cursor's order",
  },
};

function refused(text: string): never {
  throw workflowError("invalid_cursor", `${JSON.stringify(text)} is not a cursor this server gave`);
}

export const runCursor: Decoder<RunCursor> = {
  expected: "cursor",
  schema: { type: "string", description: "a next_cursor from a previous page" },
  run(value, path) {
    const text = string({ expected: "cursor" }).run(value, path);
    let parts: unknown;
    try {
      parts = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    } catch {
      refused(text);
    }
    if (!Array.isArray(parts)) refused(text);
    const [startedAt, runId, ...rest] = parts;
    // Two parts: an oldest-first cursor (as every cursor was before lists had an order).
    const order: RunOrder | undefined =
      rest.length === 0
        ? "oldest"
        : rest.length === 1 && rest[0] === "newest"
          ? "newest"
          : undefined;
    // A start time is whole milliseconds (a database BIGINT): anything else was not handed out.
    if (!Number.isSafeInteger(startedAt) || typeof runId !== "string" || order === undefined) {
      refused(text);
    }
    return { position: { startedAt: startedAt as number, runId }, order };
  },
};

export function encodeRunCursor(position: RunPosition, order: RunOrder): string {
  const parts: unknown[] = [position.startedAt, position.runId];
  if (order === "newest") parts.push(order);
  return Buffer.from(JSON.stringify(parts)).toString("base64url");
}

/** The order a page is listed in: the body's, the cursor's, and refused when they differ. */
export function listOrder(asked: RunOrder | undefined, cursor: RunCursor | undefined): RunOrder {
  if (cursor === undefined) return asked ?? "oldest";
  if (asked !== undefined && asked !== cursor.order) {
    throw workflowError(
      "invalid_cursor",
      `the cursor continues a list in order ${JSON.stringify(cursor.order)}, not ${JSON.stringify(asked)}: ` +
        "send the cursor with the order of the page that gave it, or no cursor to start over",
    );
  }
  return cursor.order;
}
