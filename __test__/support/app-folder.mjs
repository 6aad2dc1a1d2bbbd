// A folder where `import "cairnq"` is this package as `npm install cairnq`
// lays it out, for tests that run code as an application of the package
// would (the README's examples, the testing kit's examples under each runner).
import fs from "node:fs";
import path from "node:path";

import { REPO_ROOT, makeTempDir } from "./helpers.mjs";

const PACKAGE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));

/**
 * The package's published files (and the built addon) copied into
 * node_modules/cairnq, its dependencies and `linked` (names of this
 * repository's node_modules, e.g. a test runner) linked beside it, and a
 * package.json of `"type": "module"`. A copy, not a link: Deno reads a
 * package's CommonJS files as such only inside node_modules.
 * @param {import("node:test").TestContext} t
 * @param {string} prefix the temp folder's name prefix
 * @param {string[]} [linked]
 */
export function appFolder(t, prefix, linked = []) {
  const dir = makeTempDir(t, prefix);
  const installed = path.join(dir, "node_modules", "cairnq");
  fs.mkdirSync(installed, { recursive: true });
  const addons = fs.readdirSync(REPO_ROOT).filter((f) => /^cairnq\..*\.node$/.test(f));
  for (const file of ["package.json", ...PACKAGE.files, ...addons]) {
    fs.cpSync(path.join(REPO_ROOT, file), path.join(installed, file), { recursive: true });
  }
  for (const dependency of [...Object.keys(PACKAGE.dependencies), ...linked]) {
    const link = path.join(dir, "node_modules", dependency);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules", dependency), link, "dir");
  }
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
  return dir;
}
