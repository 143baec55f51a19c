#!/usr/bin/env node
import { main } from "../src/common/cli.ts";
import { storeProgram } from "../src/store/cli/program.ts";

main(storeProgram);
