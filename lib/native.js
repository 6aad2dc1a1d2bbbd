"use strict";
// The compiled addon, through the platform loader napi-rs generates. When no
// prebuilt binary fits this machine, say which package is missing up front
// (the loader's own error buries it in a chain of causes).

function platformPackage() {
  const { platform, arch } = process;
  if (platform !== "linux") return `cairnq-${platform}-${arch}`;
  // @types/node types the report as a bare `object`.
  const report = /** @type {{ getReport?(): { header?: { glibcVersionRuntime?: string } } } | undefined} */ (
    process.report
  );
  const glibc = report?.getReport?.().header?.glibcVersionRuntime;
  return `cairnq-linux-${arch}-${glibc ? "gnu" : "musl"}`;
}

try {
  module.exports = require("../binding.js");
} catch (err) {
  const { version } = require("../package.json");
  throw new Error(
    `cairnq: no native binary for ${process.platform}-${process.arch}: the optional dependency ` +
      `"${platformPackage()}@${version}" is not installed. Reinstall without --omit=optional / ` +
      "--no-optional, or build from source with `npm run build`.",
    { cause: err },
  );
}
