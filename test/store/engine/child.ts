/** A store served by a child process the test can SIGKILL (test/store/serve-entry.ts). */

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const entry = fileURLToPath(new URL("../serve-entry.ts", import.meta.url));

export async function startChild(dir: string, socketPath: string) {
  const child = spawn(process.execPath, [entry, dir, socketPath], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`store child exited with ${code}`)));
  });
  return child;
}
