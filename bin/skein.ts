#!/usr/bin/env node
import { main } from "../src/common/cli.ts";
import { skeinProgram } from "../src/workflow/cli/program.ts";

main(skeinProgram);
