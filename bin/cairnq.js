#!/usr/bin/env node
"use strict";
// `npx cairnq …`: the command line (lib/cli/index.js). The exit code is set,
// not forced, so buffered output is flushed first.

// A reader that went away (`cairnq top | head`) ends the output, not in a
// stack trace: the command stops there, quietly and successfully.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (/** @type {NodeJS.ErrnoException} */ err) => {
    if (err.code !== "EPIPE") throw err;
    process.exit(0);
  });
}

require("../lib/cli/index.js")
  .main(process.argv)
  .then((code) => {
    process.exitCode = code;
  });
