// binding.js's first musl check (scripts/build/loader-libc.mjs inserts it after
// napi build): the C library mapped into the process decides, not the host's
// /usr/bin/ldd. The check runs here on /proc/self/maps texts as each kind of
// system maps its libc.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";

const loader = fs.readFileSync(new URL("../binding.js", import.meta.url), "utf8");

/** binding.js's isMuslFromProcessMaps, reading `maps` as /proc/self/maps. */
function checkOn(maps) {
  const source = loader.match(/^const isMuslFromProcessMaps = \(\) => \{\n[\s\S]*?^\}\n/m);
  assert.ok(source, "binding.js defines isMuslFromProcessMaps (run npm run build)");
  const readFileSync = (file) => {
    assert.equal(file, "/proc/self/maps");
    if (maps === null) throw new Error("ENOENT");
    return maps;
  };
  return new Function("readFileSync", `${source[0]}\nreturn isMuslFromProcessMaps()`)(readFileSync);
}

const line = (file) => `7f2a1c000000-7f2a1c028000 r--p 00000000 08:01 1234 ${file}`;

test("glibc mapped (Debian, RHEL; the arm64 loader under qemu): not musl", () => {
  assert.equal(checkOn([line("/usr/bin/node"), line("/usr/lib/x86_64-linux-gnu/libc.so.6")].join("\n")), false);
  assert.equal(checkOn([line("/opt/node/bin/node"), line("/lib64/libc.so.6")].join("\n")), false);
  assert.equal(checkOn(line("/usr/lib/aarch64-linux-gnu/libc.so.6")), false);
});

test("musl mapped: Alpine's loader, Debian's musl libc: musl", () => {
  assert.equal(checkOn([line("/usr/local/bin/node"), line("/lib/ld-musl-x86_64.so.1")].join("\n")), true);
  assert.equal(checkOn(line("/lib/ld-musl-aarch64.so.1")), true);
  assert.equal(checkOn(line("/usr/lib/x86_64-linux-musl/libc.so")), true);
});

test("no libc to be seen (unreadable maps, a static runtime): the generated checks decide", () => {
  assert.equal(checkOn(null), null);
  assert.equal(
    checkOn([line("/usr/local/bin/bun"), "7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0 [stack]"].join("\n")),
    null,
  );
});

test("this process, and the loader consults the maps first", { skip: process.platform !== "linux" }, () => {
  assert.equal(
    checkOn(fs.readFileSync("/proc/self/maps", "utf8")),
    !process.report.getReport().header.glibcVersionRuntime,
  );
  assert.match(
    loader,
    /musl = isMuslFromProcessMaps\(\)\n\s+if \(musl === null\) \{\n\s+musl = isMuslFromFilesystem\(\)/,
  );
});
