// The testing kit's examples (examples/testing/, docs/api.md, "Testing") as
// an application runs them: in a folder where cairnq is installed, each under
// its runner (node:test, vitest, jest) as a process of its own. Each must
// pass as written, and fail once its check-in is expected a millisecond early,
// so a runner that ran nothing, or a clock that skipped ahead, cannot pass.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { appFolder } from "../support/app-folder.mjs";
import { REPO_ROOT, runProcess } from "../support/helpers.mjs";

const EXAMPLES = path.join(REPO_ROOT, "examples", "testing");
const BIN = (file) => path.join(REPO_ROOT, "node_modules", file);

/** Each runner: its example file and how it runs the examples in `dir`. */
const RUNNERS = [
  { name: "node:test", file: "node-test.test.mjs", argv: (file) => ["--test", file] },
  {
    name: "vitest",
    file: "vitest.test.mjs",
    argv: (file) => [BIN("vitest/vitest.mjs"), "run", "--root", ".", "--reporter", "verbose", file],
  },
  {
    name: "jest",
    file: "jest.test.cjs",
    argv: (file) => [BIN("jest/bin/jest.js"), "--rootDir", ".", "--verbose", file],
  },
];

/** @param {NodeJS.ProcessEnv} env */
function withoutTestContext(env) {
  const rest = { ...env };
  delete rest.NODE_TEST_CONTEXT;
  return rest;
}

/** `code` whose check-in is expected a millisecond before it is due. */
function aMillisecondEarly(code) {
  const moved = code.replace(/kit\.clock\.advance\((signup\.)?DAY_MS\)/, "kit.clock.advance($1DAY_MS - 1)");
  assert.notEqual(moved, code, "the example advances the clock by DAY_MS");
  return moved;
}

test(
  "the testing kit's examples pass under node:test, vitest and jest, and fail when wrong",
  { timeout: 600_000 },
  async (t) => {
    const dir = appFolder(t, "cairnq-testing-examples-", ["vitest", "jest", "@jest/globals"]);
    for (const variant of ["as-written", "early"]) {
      fs.mkdirSync(path.join(dir, variant));
      fs.copyFileSync(path.join(EXAMPLES, "signup.cjs"), path.join(dir, variant, "signup.cjs"));
    }
    for (const runner of RUNNERS) {
      const code = fs.readFileSync(path.join(EXAMPLES, runner.file), "utf8");
      fs.writeFileSync(path.join(dir, "as-written", runner.file), code);
      fs.writeFileSync(path.join(dir, "early", runner.file), aMillisecondEarly(code));
    }
    for (const runner of RUNNERS) {
      await t.test(runner.name, async () => {
        const run = (variant) =>
          runProcess(process.execPath, runner.argv(runner.file), {
            cwd: path.join(dir, variant),
            timeoutMs: 180_000,
            // Not this test's own runner context: node --test would take itself for a subtest run.
            env: { ...withoutTestContext(process.env), CI: "1" },
          });
        const passed = await run("as-written");
        const output = passed.stdout + passed.stderr;
        assert.equal(passed.code, 0, `${runner.name} failed the example:\n${output}`);
        assert.match(output, /a failed send is retried once its backoff has run out/, "the runner ran the examples");
        const failed = await run("early");
        assert.notEqual(failed.code, 0, `${runner.name} passed a wrong expectation:\n${failed.stdout}${failed.stderr}`);
        assert.match(failed.stdout + failed.stderr, /check-in/, "the check-in expectation is what failed");
      });
    }
  },
);
