/**
 * `search.text`'s handler, beside the service so the verb table stays one line: the
 * embedding group is needed (else `embed_disabled`), `k` is a page and so bounded by
 * max_page (`page_limit`).
 */

import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import type { SearchAnswer, SearchArgs, SearchService } from "./service.ts";

export function searchText(
  store: Store,
  services: { readonly embed: unknown; readonly search?: SearchService | null },
  args: SearchArgs,
): Promise<SearchAnswer> {
  const search = services.search;
  if (services.embed === null || search === undefined || search === null) {
    throw storeError("embed_disabled");
  }
  const max = store.ctx.settings.maxPage;
  if (args.k > max) throw storeError("page_limit", `k ${args.k} is above max_page (${max})`);
  return search.search(args);
}
