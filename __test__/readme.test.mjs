// The README's examples as a reader pastes them (README.md, "Quick start"):
// every code block marked `<!-- readme-example GROUP: FILE [serves] -->` is
// written to FILE in a fresh folder per GROUP, where `cairnq` is this package
// as installed. TypeScript blocks are type-checked against index.d.ts, then
// run with their types stripped under Node, and as they are under Deno. In a group, the `serves` files start first and
// keep running; the others run one after another and must exit 0 by
// themselves; then the servers get SIGINT and must exit 0.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

import { appFolder } from "./support/app-folder.mjs";
import { REPO_ROOT, runProcess, spawnProcess } from "./support/helpers.mjs";

const README = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
const MARKED_BLOCK = /<!-- readme-example ([\w-]+): ([\w.-]+)( serves)? -->\n```(ts|js)\n([\s\S]*?)\n```/g;
const TSC = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");

/** @returns {Map<string, {file: string, serves: boolean, lang: string, code: string}[]>} */
function examplesByGroup() {
  const groups = new Map();
  for (const [, group, file, serves, lang, code] of README.matchAll(MARKED_BLOCK)) {
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push({ file, serves: Boolean(serves), lang, code });
  }
  return groups;
}

/** The README's section under `## heading`. */
function section(heading) {
  const start = README.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `README has no "## ${heading}" section`);
  return README.slice(start, README.indexOf("\n## ", start + 1));
}

const DENO = path.join(REPO_ROOT, "node_modules", ".bin", "deno");

async function typeCheck(dir, files) {
  const tsconfig = {
    compilerOptions: {
      strict: true,
      noEmit: true,
      module: "NodeNext",
      moduleResolution: "NodeNext",
      target: "ES2022",
      lib: ["ES2022"],
      types: ["node"],
      typeRoots: [path.join(REPO_ROOT, "node_modules", "@types")],
    },
    files,
  };
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
  const out = await runProcess(process.execPath, [TSC, "-p", dir], { cwd: dir, timeoutMs: 120_000 });
  assert.equal(out.code, 0, `the README's ${files.join(", ")} do not type-check:\n${out.stdout}${out.stderr}`);
}

/**
 * Write the group's files, type-checked when `typeCheckFirst`; resolves the
 * runnable file of each example (TypeScript with its types stripped).
 */
async function writeGroup(dir, examples, typeCheckFirst) {
  const typescriptFiles = [];
  for (const example of examples) {
    fs.writeFileSync(path.join(dir, example.file), example.code);
    if (example.lang === "ts") typescriptFiles.push(example.file);
  }
  if (typeCheckFirst && typescriptFiles.length > 0) await typeCheck(dir, typescriptFiles);
  return examples.map((example) => {
    if (example.lang !== "ts") return { ...example, runnable: example.file };
    const runnable = example.file.replace(/\.ts$/, ".mjs");
    const { outputText } = ts.transpileModule(example.code, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    fs.writeFileSync(path.join(dir, runnable), outputText);
    return { ...example, runnable };
  });
}

test("every code block of the Quick start is a marked example, the one-file form first", () => {
  const quickStart = section("Quick start");
  const blocks = quickStart.match(/^```/gm) ?? [];
  const marked = quickStart.match(/^<!-- readme-example [\w-]+: .* -->\n```/gm) ?? [];
  assert.ok(marked.length >= 3, "the Quick start shows the one-file form and the two-process form");
  assert.equal(marked.length * 2, blocks.length, "an unmarked code block in the Quick start");
  assert.match(marked[0], /readme-example quickstart: quickstart\.ts -->/);
});

/**
 * How each runtime runs an example: Node the type-stripped file, Deno the
 * file as pasted (it runs TypeScript itself). Deno is the pinned
 * devDependency; without it (a partial install) its runs skip.
 */
const RUNTIMES = [
  { name: "Node", skip: false, argv: (example) => [process.execPath, example.runnable] },
  {
    name: "Deno",
    skip: fs.existsSync(DENO) ? false : "no node_modules/.bin/deno",
    argv: (example) => [DENO, "run", "-A", example.file],
  },
];

for (const [group, examples] of examplesByGroup()) {
  for (const runtime of RUNTIMES) {
    const files = examples.map((e) => e.file).join(", ");
    test(
      `README example "${group}" (${files}) runs as pasted under ${runtime.name}`,
      { timeout: 240_000, skip: runtime.skip },
      async (t) => {
        const dir = appFolder(t, `cairnq-readme-${group}-`);
        const runnables = await writeGroup(dir, examples, runtime.name === "Node");
        const servers = runnables
          .filter((e) => e.serves)
          .map((e) => {
            const [command, ...args] = runtime.argv(e);
            return { example: e, proc: spawnProcess(t, command, args, { cwd: dir, label: e.file }) };
          });
        for (const example of runnables.filter((e) => !e.serves)) {
          const [command, ...args] = runtime.argv(example);
          const out = await runProcess(command, args, { cwd: dir, timeoutMs: 120_000 });
          assert.equal(out.code, 0, `${example.file} exited ${out.code} (${out.signal}): ${out.stderr}`);
          assert.equal(out.stdout, "https://example.com/cat.png?w=128\n", `${example.file} printed`);
        }
        for (const { example, proc } of servers) {
          assert.equal(proc.exitInfo, null, `${example.file} exited before SIGINT; ${proc.tail()}`);
          proc.kill("SIGINT");
          const exit = await proc.waitExit(60_000);
          assert.deepEqual(exit, { code: 0, signal: null }, `${example.file} after SIGINT; ${proc.tail()}`);
        }
      },
    );
  }
}
