// The reviewer's side of the agent-review example: two module actions on the `review` task
// queue (docs/workers.md, the module kind). `branch_of` names a run's branch; `merge` merges
// it into main through the store's MCP endpoint with the reviewer's own pass (skein-idp
// client credentials: the reviewer, not the agent, may write main). The worker's environment
// says where: REVIEW_MCP_URL, REVIEW_ISSUER, REVIEW_CLIENT_ID, REVIEW_SECRET_FILE,
// REVIEW_DATABASE and REVIEW_COLLECTION.

import { readFile } from "node:fs/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

interface Ctx {
  readonly signal: AbortSignal;
  readonly workflowId: string;
}

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set`);
  return value;
};

/** The branch the run's agent works on: the given one, else `agent-<workflow id>`. */
export async function branchOf(input: { branch?: string | null }, ctx: Ctx): Promise<string> {
  return input.branch ?? `agent-${ctx.workflowId}`;
}

/** A pass of the reviewer's client for the store's database (client credentials). */
async function reviewerPass(signal: AbortSignal): Promise<string> {
  const issuer = env("REVIEW_ISSUER");
  const discovery = (await (
    await fetch(`${issuer}/.well-known/openid-configuration`, { signal })
  ).json()) as { token_endpoint: string };
  const secret = (await readFile(env("REVIEW_SECRET_FILE"), "utf8")).trim();
  const basic = Buffer.from(`${env("REVIEW_CLIENT_ID")}:${secret}`).toString("base64");
  const response = await fetch(discovery.token_endpoint, {
    method: "POST",
    signal,
    headers: {
      authorization: `Basic ${basic}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      resource: `urn:skein:store:${env("REVIEW_DATABASE")}`,
    }),
  });
  if (!response.ok) throw new Error(`the token endpoint answered ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** Merges the branch into main; the output is the merge's version. */
export async function merge(
  input: { branch: string; message?: string | null },
  ctx: Ctx,
): Promise<{ branch: string; into: string; version: number; outcome: string }> {
  const pass = await reviewerPass(ctx.signal);
  const client = new Client({ name: "agent-review", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(env("REVIEW_MCP_URL")), {
      requestInit: { headers: { authorization: `Bearer ${pass}` } },
    }),
  );
  try {
    const result = await client.callTool(
      {
        name: "branches_merge",
        arguments: {
          collection: env("REVIEW_COLLECTION"),
          from: input.branch,
          into: "main",
          message: input.message ?? `merge ${input.branch} after review`,
        },
      },
      undefined,
      { signal: ctx.signal },
    );
    if (result.isError) {
      const text = (result.content as { text?: string }[])[0]?.text ?? "";
      // A failed merge (a conflict, a denial) fails the activity with the store's code.
      const code =
        (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? "merge_failed";
      throw Object.assign(new Error(text), { code, nonRetryable: code !== "store_unavailable" });
    }
    const merged = result.structuredContent as { outcome: string; receipt: { version: number } };
    return {
      branch: input.branch,
      into: "main",
      version: merged.receipt.version,
      outcome: merged.outcome,
    };
  } finally {
    await client.close();
  }
}
