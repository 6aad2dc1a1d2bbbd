// `node scripts/release/publish-manifest.mjs <package.json>`: rewrites the main
// package's manifest as publishing uploads it (what `napi prepublish` writes):
// optionalDependencies name every platform package under npm/, at this
// version, so npm installs the one whose os/cpu/libc match. Fails when a
// platform package's version differs or the loader (binding.js) never asks
// for it by name. Run from the repository root.
import fs from "node:fs";
import path from "node:path";

const manifest = process.argv[2];
const pkg = JSON.parse(fs.readFileSync(manifest, "utf8"));
const loader = fs.readFileSync("binding.js", "utf8");
const optional = {};
for (const dir of fs.readdirSync("npm").sort()) {
  const sub = JSON.parse(fs.readFileSync(path.join("npm", dir, "package.json"), "utf8"));
  if (sub.version !== pkg.version) throw new Error(`npm/${dir}: version ${sub.version} != ${pkg.version}`);
  if (!loader.includes(`require('${sub.name}')`)) throw new Error(`binding.js never requires ${sub.name}`);
  optional[sub.name] = sub.version;
}
pkg.optionalDependencies = { ...pkg.optionalDependencies, ...optional };
fs.writeFileSync(manifest, JSON.stringify(pkg, null, 2) + "\n");
console.log(`optionalDependencies: ${Object.keys(optional).join(", ")}`);
