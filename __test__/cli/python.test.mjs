// The command line on databases the Python SDK (PyPI cairnq 0.7.0) made and
// wrote: it reads them as they are and acts on them, and Python sees the
// result. Skips like the other interop tests without CAIRNQ_PYTHON's SDK (in
// CI it is always there).
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { makeDbPath } from "../support/helpers.mjs";
import { cliJson, cliOk } from "../support/cli-helpers.mjs";
import { SDKS, pythonSdkProblem, pythonStep, sdkSkipReason } from "../support/python-sdks.mjs";

const sdk = SDKS.find((one) => one.version === "0.7.0");
const problem = pythonSdkProblem(sdk);
// In CI a missing SDK must fail, not skip.
const SKIP = problem && !process.env.CI ? sdkSkipReason(sdk, problem) : false;

/** One step of the Python helper (fixtures/python/cairnq_cli.py); its JSON output. */
const py = (command, db, ...args) => pythonStep(sdk, command, db, ...args);

describe("cli on a database of the Python SDK", { skip: SKIP }, () => {
  test("stats, list, get --key and retry read and act on what Python wrote", { timeout: 180_000 }, async (t) => {
    const db = makeDbPath(t);
    await py("create-db", db);
    const { task: keyed } = await py(
      "submit",
      db,
      "--name",
      "py.job",
      "--key",
      "py-key",
      "--payload",
      '{"text":"Grüße 🌲"}',
      "--queue",
      "py",
    );
    await py("submit", db, "--name", "py.other", "--queue", "default");
    const failed = await py(
      "claim-fail",
      db,
      "--worker-id",
      "py-worker",
      "--queue",
      "default",
      "--error",
      JSON.stringify({ type: "TaskError", code: "py_boom", message: "from python", retryable: false, details: {} }),
    );
    assert.equal(failed.failed.status, "failed");

    assert.deepEqual(await cliJson(["stats", db]), {
      default: { queued: 0, running: 0, succeeded: 0, failed: 1, canceled: 0 },
      py: { queued: 1, running: 0, succeeded: 0, failed: 0, canceled: 0 },
    });
    const got = await cliJson(["get", db, "--key", "py-key"]);
    assert.equal(got.id, keyed.id);
    assert.deepEqual(got.payload, { text: "Grüße 🌲" });
    assert.match(await cliOk(["list", db, "--status", "failed"]), /py\.other\s+default\s+failed/);

    const retried = await cliJson(["retry", db, failed.failed.id]);
    assert.equal(retried.status, "queued");
    const seen = await py("get", db, failed.failed.id);
    assert.equal(seen.task.status, "queued", "Python does not see the CLI's retry");
  });
});
