// The Python SDKs the interop tests share databases with: PyPI cairnq 0.7.0
// (schema_version 6) through CAIRNQ_PYTHON and 0.15.1 (schema_version 10)
// through CAIRNQ_PYTHON_015, each a Python with "cairnq[postgres]==<version>"
// (.ci/run installs both).
import { spawnSync } from "node:child_process";

export const SDKS = [
  { version: "0.7.0", env: "CAIRNQ_PYTHON", python: process.env.CAIRNQ_PYTHON ?? "python3", schemaVersion: "6" },
  { version: "0.15.1", env: "CAIRNQ_PYTHON_015", python: process.env.CAIRNQ_PYTHON_015, schemaVersion: "10" },
];

/** Why `sdk` cannot run, or null: its interpreter must import that very version. */
export function pythonSdkProblem(sdk) {
  if (!sdk.python) return `${sdk.env} is not set`;
  const probe = spawnSync(sdk.python, ["-c", "import cairnq, sys; sys.stdout.write(cairnq.__version__)"], {
    encoding: "utf8",
    timeout: 60_000,
  });
  if (probe.error) return `cannot run ${sdk.python}: ${probe.error.message}`;
  if (probe.status !== 0) return `${sdk.python} cannot import cairnq: ${probe.stderr.trim().split("\n").pop()}`;
  if (probe.stdout !== sdk.version) return `${sdk.python} has cairnq ${probe.stdout}, not ${sdk.version}`;
  return null;
}

/** The skip reason for `sdk`'s tests (false when it runs); `problem` from pythonSdkProblem. */
export function sdkSkipReason(sdk, problem) {
  return problem
    ? `Python cairnq SDK ${sdk.version} unavailable (${problem}); set ${sdk.env} to a Python with "cairnq[postgres]==${sdk.version}"`
    : false;
}
