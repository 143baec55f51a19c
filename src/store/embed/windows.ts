/**
 * Windows over a long text's content tokens: each window holds at most `capacity` content
 * tokens (embed_tokens less the special and prefix tokens) and starts `capacity - overlap`
 * tokens after the one before it, so consecutive windows share `overlap` tokens and the
 * last window ends at the text's end. A text that fits is one window; without windows a
 * longer document is truncated to its first `capacity` tokens (a longer question is
 * refused by the worker, never truncated).
 */

export interface Span {
  readonly start: number;
  readonly end: number;
}

/** Windows a text of `length` content tokens needs (at least one). */
export function windowCount(length: number, capacity: number, overlap: number): number {
  if (length <= capacity) return 1;
  const stride = capacity - overlap;
  return 1 + Math.ceil((length - capacity) / stride);
}

export function windowSpans(length: number, capacity: number, overlap: number): Span[] {
  const count = windowCount(length, capacity, overlap);
  const stride = capacity - overlap;
  const spans: Span[] = [];
  for (let i = 0; i < count; i++) {
    const start = i * stride;
    spans.push({ start, end: Math.min(length, start + capacity) });
  }
  return spans;
}
