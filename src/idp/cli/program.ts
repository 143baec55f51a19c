/**
 * The `skein-idp` program: the development identity provider (`serve`) and the commands
 * that manage its users, groups, clients, grants and placements. See docs/identity.md.
 */

import type { Program } from "../../common/cli.ts";
import { VERSION } from "../../common/version.ts";
import { clientCommand, grantCommand, groupCommand, revokeCommand, userCommand } from "./manage.ts";
import { placementCommand } from "./placement.ts";
import { serveCommand } from "./serve.ts";

export const idpProgram: Program = {
  name: "skein-idp",
  version: VERSION,
  summary: "a development identity provider (OIDC, AuthZEN) for skein-store",
  commands: [
    serveCommand,
    userCommand,
    groupCommand,
    clientCommand,
    grantCommand,
    revokeCommand,
    placementCommand,
  ],
};
