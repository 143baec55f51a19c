/** The version both programs report, read once from package.json. */

import pkg from "../../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
