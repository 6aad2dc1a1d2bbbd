#!/usr/bin/env node
"use strict";
// `npx cairnq …`: the command line (lib/cli/index.js). The exit code is set,
// not forced, so buffered output is flushed first.
require("../lib/cli/index.js")
  .main(process.argv)
  .then((code) => {
    process.exitCode = code;
  });
