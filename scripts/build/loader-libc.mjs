// napi build's `--pipe` hands every file it wrote to this script (package.json's
// build scripts); only the JS loader, binding.js, is changed. The generated loader
// decides musl first from /usr/bin/ldd, a file of the host system rather than
// of the running process, so a musl runtime on a glibc host (a container
// layer, an emulated target) would be handed the -gnu binary. This inserts a
// first check on the libc mapped into the process itself (/proc/self/maps),
// and leaves the generated fallbacks as they are. Fails when the generated
// code no longer has the expected shape, so a napi-rs upgrade cannot silently
// drop the check.
import fs from "node:fs";
import path from "node:path";

const file = process.argv[2];
if (!file) throw new Error("usage: node scripts/build/loader-libc.mjs <file napi build wrote>");
if (path.basename(file) !== "binding.js") process.exit(0);
const source = fs.readFileSync(file, "utf8");

const check = `const isMuslFromProcessMaps = () => {
  // The C library mapped into this process: glibc's libc.so.6, or a musl
  // loader/libc (Alpine's ld-musl-*, Debian's x86_64-linux-musl/libc.so).
  let maps
  try {
    maps = readFileSync('/proc/self/maps', 'utf-8')
  } catch {
    return null
  }
  if (/\\/libc\\.so\\.6$/m.test(maps)) return false
  if (/\\/(ld-musl-|libc\\.musl-)[^/]*$|musl[^/\\n]*\\/libc\\.so$/m.test(maps)) return true
  return null
}

`;
const patches = [
  ["const isMuslFromFilesystem = () => {", check + "const isMuslFromFilesystem = () => {"],
  [
    "    musl = isMuslFromFilesystem()\n",
    "    musl = isMuslFromProcessMaps()\n    if (musl === null) {\n      musl = isMuslFromFilesystem()\n    }\n",
  ],
];

if (!source.includes("const isMuslFromProcessMaps")) {
  let patched = source;
  for (const [anchor, replacement] of patches) {
    if (patched.split(anchor).length !== 2) {
      throw new Error(`binding.js: expected exactly one "${anchor.trim()}" in the generated loader`);
    }
    patched = patched.replace(anchor, replacement);
  }
  fs.writeFileSync(file, patched);
}
