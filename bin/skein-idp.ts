#!/usr/bin/env node
import { main } from "../src/common/cli.ts";
import { idpProgram } from "../src/idp/cli/program.ts";

main(idpProgram);
