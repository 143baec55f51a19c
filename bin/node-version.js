// The Node version the programs need, checked before any TypeScript is loaded: an older
// Node would fail on the first `.ts` import with a stack trace about file extensions. Plain
// JavaScript on purpose, so that any Node can run it and say what is wrong.

export const REQUIRED_MAJOR = 24;

/** Exits 1 with a plain message when this Node is older than REQUIRED_MAJOR. */
export function requireNode(program) {
  const found = process.versions.node;
  if (Number(found.split(".")[0]) >= REQUIRED_MAJOR) return;
  process.stderr.write(
    `${program}: needs Node.js ${REQUIRED_MAJOR} or newer; this is Node.js ${found} ` +
      `(${process.execPath}).\n` +
      `Run it as \`npx ${program}\` (or \`npm exec ${program}\`) from the project, which uses ` +
      "the project's own Node 24, or install Node.js 24.\n",
  );
  process.exit(1);
}
