#!/usr/bin/env bash
# Registry install proof: every package is published, as a release would
# upload it, to a private npm registry (verdaccio) on loopback; then, each in a
# fresh folder with no Rust toolchain on PATH:
#   - `npm install cairnq` installs the main package and exactly one platform
#     package, this machine's, and the quickstart runs on it under Node;
#   - `npm install cairnq --os --cpu --libc` for each platform under npm/
#     installs exactly that platform's package;
#   - `bun add cairnq` installs this machine's package, and the quickstart
#     runs under Bun.
# Run after the platform builds (scripts/platforms/all.sh): every
# npm/<name>/cairnq.<name>.node must be in place. Only the cairnq packages live
# in the private registry; it fetches their dependencies from the registry npm
# is configured with. Prints "N passed, N failed".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo=$PWD
source scripts/platforms/lib.sh
source scripts/release/no-rust-path.sh

verdaccio_version=6.8.0
bun_version=1.4.5
host=linux-x64-gnu
platforms=()
for dir in npm/*/; do platforms+=("$(basename "$dir")"); done

work=$(mktemp -d "${TMPDIR:-/tmp}/cairnq-registry-proof.XXXXXX")
registry_pid=
cleanup() {
    [[ -z $registry_pid ]] || kill "$registry_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# --- the registry -------------------------------------------------------------

verdaccio_dir="$cache/tools/verdaccio-$verdaccio_version"
if [[ ! -f $verdaccio_dir/.done ]]; then
    rm -rf "$verdaccio_dir" && mkdir -p "$verdaccio_dir"
    echo '{ "private": true }' >"$verdaccio_dir/package.json"
    (cd "$verdaccio_dir" && npm install --no-audit --no-fund --loglevel=error "verdaccio@$verdaccio_version")
    touch "$verdaccio_dir/.done"
fi
upstream=$(npm config get registry)
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
registry=http://127.0.0.1:$port/
cat >"$work/verdaccio.yaml" <<EOF
storage: $work/storage
auth:
  htpasswd:
    file: $work/htpasswd
    max_users: 1
uplinks:
  upstream:
    url: $upstream
packages:
  "cairnq":
    access: \$all
    publish: \$authenticated
  "cairnq-*":
    access: \$all
    publish: \$authenticated
  "**":
    access: \$all
    proxy: upstream
max_body_size: 200mb
log: { type: stdout, format: pretty, level: warn }
EOF
"$verdaccio_dir/node_modules/.bin/verdaccio" --config "$work/verdaccio.yaml" --listen "127.0.0.1:$port" \
    >"$work/verdaccio.log" 2>&1 &
registry_pid=$!
for _ in $(seq 1 120); do
    node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$registry-/ping" && break
    kill -0 "$registry_pid" 2>/dev/null || {
        cat "$work/verdaccio.log" >&2
        exit 1
    }
    sleep 0.5
done
# A user for the publishing, as `npm adduser` creates one.
token=$(node -e '
    fetch(process.argv[1], {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "release", password: "release-proof" }),
    }).then(async (r) => {
      if (!r.ok) throw new Error(`adding the user: HTTP ${r.status}`);
      console.log((await r.json()).token);
    });' "$registry-/user/org.couchdb.user:release")
# npm's own settings for every command below: this registry, this token.
cat >"$work/npmrc" <<EOF
registry=$registry
//127.0.0.1:$port/:_authToken=$token
EOF
export NPM_CONFIG_USERCONFIG=$work/npmrc NPM_CONFIG_UPDATE_NOTIFIER=false
echo "verdaccio $verdaccio_version on $registry"

# --- publish, as the release workflow does ------------------------------------

bash scripts/release/publish.sh

# --- install, as a user does ----------------------------------------------------

stripped=$(path_without_rust "$work/path")
no_rust() { env -u NAPI_RS_NATIVE_LIBRARY_PATH -u NODE_PATH -u CARGO_HOME -u RUSTUP_HOME PATH="$stripped" "$@"; }
bun="$(npm_unpacked "@oven/bun-linux-x64@$bun_version")/bin/bun"

# fresh_app DIR: an empty project folder.
fresh_app() {
    mkdir -p "$1"
    echo '{ "name": "registry-proof-app", "version": "0.0.0", "private": true }' >"$1/package.json"
}

# The cairnq packages installed in DIR, one line.
installed() { (cd "$1/node_modules" && ls -d cairnq cairnq-* 2>/dev/null | tr '\n' ' ' | sed 's/ $//'); }

# expect_install LABEL DIR WANT: DIR's node_modules holds cairnq and WANT only.
expect_install() {
    local have
    have=$(installed "$2")
    if [[ $have == "cairnq cairnq-$3" ]]; then
        verdict ok "$1 installs cairnq and cairnq-$3 only"
    else
        verdict fail "$1 installs '$have', not 'cairnq cairnq-$3'"
    fi
}

# quickstart LABEL DIR RUNTIME: examples/quickstart.mjs, importing the
# installed package, runs to its end.
quickstart() {
    local log status=0
    sed 's#"\.\./index\.mjs"#"cairnq"#; s#"\.\./index\.js"#"cairnq"#' examples/quickstart.mjs >"$2/quickstart.mjs"
    log=$(cd "$2" && no_rust timeout -k 5 180 "$3" quickstart.mjs 2>&1) || status=$?
    if ((status == 0)); then
        verdict ok "$1: the quickstart runs"
    else
        verdict fail "$1: the quickstart exited $status" "$log"
    fi
}

app=$work/npm-host
fresh_app "$app"
(cd "$app" && no_rust npm install --no-audit --no-fund --loglevel=warn cairnq >/dev/null)
expect_install "npm install cairnq (this machine)" "$app" "$host"
quickstart "node $(node --version), installed by npm" "$app" node

for name in "${platforms[@]}"; do
    dir=$work/npm-$name
    fresh_app "$dir"
    # The platform package's own os/cpu/libc fields, as npm's flags.
    flags=$(node -e '
        const p = require(process.argv[1]);
        const flags = [`--os=${p.os[0]}`, `--cpu=${p.cpu[0]}`];
        if (p.libc) flags.push(`--libc=${p.libc[0]}`);
        console.log(flags.join(" "));' "$repo/npm/$name/package.json")
    # shellcheck disable=SC2086 # the flags are words
    (cd "$dir" && no_rust npm install --no-audit --no-fund --loglevel=warn $flags cairnq >/dev/null)
    expect_install "npm install $flags cairnq" "$dir" "$name"
done

app=$work/bun-host
fresh_app "$app"
(cd "$app" && no_rust "$bun" add --registry "$registry" cairnq >/dev/null)
expect_install "bun add cairnq (this machine)" "$app" "$host"
quickstart "bun $("$bun" --version), installed by bun" "$app" "$bun"

echo "registry-proof: $passed passed, $failed failed"
((failed == 0))
