// The order example's activities: plain async functions a `module` worker calls with the
// step's input (docs/workers.md). A real charge would call a payment API with ctx.signal.

interface Ctx {
  readonly signal: AbortSignal;
  heartbeat(details?: unknown): void;
}

export async function charge(
  input: { order_id: number; amount: number },
  ctx: Ctx,
): Promise<{ receipt: string }> {
  ctx.heartbeat({ step: "authorising" });
  return { receipt: `rcpt-${input.order_id}-${input.amount}` };
}

export async function ship(input: { order_id: number; receipt: string }): Promise<{
  tracking: string;
}> {
  return { tracking: `trk-${input.order_id}` };
}
