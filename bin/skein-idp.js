#!/usr/bin/env node
// The `skein-idp` entry: checks the Node version first (this file parses on any Node), then loads
// the TypeScript program, which needs Node 24.
import { requireNode } from "./node-version.js";

requireNode("skein-idp");
await import("./skein-idp.ts");
