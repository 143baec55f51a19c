#!/usr/bin/env node
// The `skein-store` entry: checks the Node version first (this file parses on any Node), then loads
// the TypeScript program, which needs Node 24.
import { requireNode } from "./node-version.js";

requireNode("skein-store");
await import("./skein-store.ts");
