/**
 * The `skein` program: the workflow server and its clients. Each subcommand lives in its own
 * module under this folder; this file only lists them.
 */

import type { Program } from "../../common/cli.ts";
import { VERSION } from "../../common/version.ts";
import { workerCommand } from "../../worker/command.ts";
import { adminCommand } from "./admin.ts";
import { attemptsCommand } from "./attempts.ts";
import { completionCommand } from "./completion.ts";
import { deploymentCommand } from "./deployment.ts";
import { interveneCommand } from "./intervene.ts";
import { namespaceCommand } from "./namespace.ts";
import { serveCommand } from "./serve.ts";
import { taskQueueCommand } from "./task-queue.ts";
import { tokenCommand } from "./token.ts";
import { transcriptCommand } from "./transcript.ts";
import { uiCommand } from "./ui.ts";
import { versionCommand } from "./version.ts";
import { workflowCommand } from "./workflow.ts";

export const skeinProgram: Program = {
  name: "skein",
  version: VERSION,
  summary: "durable workflows for agent work",
  commands: [
    serveCommand,
    workflowCommand,
    workerCommand,
    tokenCommand,
    namespaceCommand,
    taskQueueCommand,
    deploymentCommand,
    attemptsCommand,
    interveneCommand,
    adminCommand,
    transcriptCommand,
    uiCommand,
    versionCommand,
    completionCommand(() => skeinProgram),
  ],
};
