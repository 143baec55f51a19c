/**
 * `skein-idp placement freeze|thaw DATABASE`: the operator's switch over a database's
 * placements. While frozen the placement API refuses every new placement under the database
 * (409 `placement_frozen`), so a store creating a collection or branch there is refused
 * `placement_failed` and creates nothing; removals go on, so the store's deletes still
 * succeed. For a database being moved or audited, and to rehearse a placement failure.
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { isDatabaseName } from "../names.ts";
import { dataDirOf, dataDirOption, reportRefusals, subcommand, withState } from "./shared.ts";

export const placementCommand: Command = {
  name: "placement",
  summary: "freeze or thaw new placements under a database",
  help: "freeze --data-dir DIR DATABASE\n       thaw --data-dir DIR DATABASE\n",
  run: (args, io) =>
    reportRefusals("placement", io, async () => {
      const { values, positionals } = parseOptions(args, dataDirOption, { min: 2, max: 2 });
      const word = subcommand(positionals, ["freeze", "thaw"]);
      const dataDir = dataDirOf(values);
      const database = positionals[1]!;
      if (!isDatabaseName(database)) {
        throw new UsageError("DATABASE must be letters, digits, _ or -");
      }
      const changed = withState(dataDir, (state) =>
        word === "freeze" ? state.freezePlacements(database) : state.thawPlacements(database),
      );
      io.out(JSON.stringify({ database, frozen: word === "freeze", changed }));
      return 0;
    }),
};
