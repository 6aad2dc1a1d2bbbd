// Helpers for the command line tests: run `bin/cairnq.js` as a process (the
// way `npx cairnq` runs it), and spawn long-running commands (top, ui) whose
// output can be awaited.
import assert from "node:assert/strict";
import path from "node:path";

import { REPO_ROOT, runProcess, spawnProcess, waitFor } from "./helpers.mjs";

export const CLI = path.join(REPO_ROOT, "bin", "cairnq.js");

/** Environment without colour hints, so output is what a pipe gets. */
function plainEnv(extra = {}) {
  const env = { ...process.env };
  delete env.FORCE_COLOR;
  delete env.NO_COLOR;
  return { ...env, ...extra };
}

/**
 * Run `cairnq ...args` to completion: `{code, stdout, stderr}`.
 * @param {string[]} args
 * @param {{ env?: Record<string, string>, timeoutMs?: number }} [opts]
 */
export async function cli(args, opts = {}) {
  const out = await runProcess(process.execPath, [CLI, ...args], {
    timeoutMs: opts.timeoutMs ?? 60_000,
    env: plainEnv(opts.env),
  });
  return out;
}

/** `cli(args)` that must exit 0; resolves with stdout. */
export async function cliOk(args, opts) {
  const out = await cli(args, opts);
  assert.equal(out.code, 0, `cairnq ${args.join(" ")} exited ${out.code}: ${out.stderr}`);
  return out.stdout;
}

/** `cli([...args, "--json"])` that must exit 0; resolves with the parsed document. */
export async function cliJson(args, opts) {
  return JSON.parse(await cliOk([...args, "--json"], opts));
}

/**
 * Assert a failure: the exit code, one line on stderr matching `pattern`,
 * nothing on stdout, and no stack trace.
 */
export function assertFailure(out, code, pattern) {
  assert.equal(out.code, code, `expected exit ${code}, got ${out.code}; stderr: ${out.stderr}`);
  const lines = out.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `expected one line on stderr, got: ${out.stderr}`);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(out.stderr, /^\s+at /m, "a stack trace reached the user");
  assert.equal(out.stdout, "");
}

/**
 * Spawn `cairnq ...args` and keep it running (helpers.mjs `spawnProcess`,
 * killed when the test ends), with `output()` and `errors()` so far and
 * `until(predicate)` on its stdout.
 */
export function spawnCli(t, args, opts = {}) {
  const proc = spawnProcess(t, process.execPath, [CLI, ...args], {
    label: `cairnq ${args[0]}`,
    env: plainEnv(opts.env),
  });
  return Object.assign(proc, {
    output: () => proc.stdout,
    errors: () => proc.stderr,
    /** Resolves with stdout once `predicate(stdout)` holds. */
    async until(predicate, what, timeoutMs = 30_000) {
      await waitFor(() => predicate(proc.stdout) || proc.exitInfo !== null, {
        timeoutMs,
        intervalMs: 25,
        message: `${what} (stdout: ${proc.stdout}; stderr: ${proc.stderr})`,
      });
      assert.ok(
        predicate(proc.stdout),
        `cairnq exited (${JSON.stringify(proc.exitInfo)}) before ${what}; stderr: ${proc.stderr}`,
      );
      return proc.stdout;
    },
  });
}

/** The `http://…` URL `cairnq ui` prints. */
export async function uiUrl(proc) {
  const out = await proc.until((s) => /open http:\/\/\S+/.test(s), "the dashboard URL");
  return /open (http:\/\/\S+)/.exec(out)[1];
}

/** `arg` quoted for a POSIX shell. */
function shellQuote(arg) {
  return `'${String(arg).replace(/'/g, `'\\''`)}'`;
}

/**
 * Run `cairnq ...args` on a pseudo-terminal (util-linux `script`), as a user
 * at a terminal runs it: `{code, output}`, stdout and stderr as the terminal
 * got them (line ends as `\n`). NO_COLOR is set, so every escape in the
 * output came from the data.
 */
export async function cliOnTerminal(args, opts = {}) {
  const command = [process.execPath, CLI, ...args].map(shellQuote).join(" ");
  const out = await runProcess("script", ["-q", "-e", "-c", command, "/dev/null"], {
    timeoutMs: opts.timeoutMs ?? 60_000,
    env: plainEnv({ NO_COLOR: "1", ...opts.env }),
  });
  return { code: out.code, output: out.stdout.replace(/\r\n/g, "\n") };
}

/**
 * Run a shell pipeline `cairnq ...args | <reader>` (the reader a shell
 * command such as `head -c 100`): `{code, stderr, readerOutput}`, `code`
 * being cairnq's exit status (bash's PIPESTATUS).
 */
export async function cliIntoPipe(args, reader, opts = {}) {
  const command = [process.execPath, CLI, ...args].map(shellQuote).join(" ");
  const out = await runProcess("bash", ["-c", `${command} | ${reader}; echo "cairnq exited \${PIPESTATUS[0]}" >&2`], {
    timeoutMs: opts.timeoutMs ?? 60_000,
    env: plainEnv(opts.env),
  });
  const status = /cairnq exited (\d+)\n?$/.exec(out.stderr);
  return {
    code: status ? Number(status[1]) : null,
    stderr: out.stderr.replace(/cairnq exited \d+\n?$/, ""),
    readerOutput: out.stdout,
  };
}
