#!/usr/bin/env bash
# The whole test suite, in order, stopping at the first failure (`npm test`).
# Postgres and Python interop tests run when CAIRNQ_TEST_PG_DSN and
# CAIRNQ_PYTHON / CAIRNQ_PYTHON_015 (the Python SDKs 0.7.0 and 0.15.1) are set
# (.ci/run and .github/workflows/ci.yml set them);
# without them those parts skip. CAIRNQ_TEST_PREBUILT=1 tests the addon already
# in the repository (in GitHub CI, the build job's artifact) instead of
# building it first. On Linux x86_64 the addon is built as shipped
# (`npm run build:dist`, for glibc 2.17 and later), elsewhere for this machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

step() { printf '\n==> %s\n' "$*"; }

if [[ "${CAIRNQ_TEST_PREBUILT:-0}" == 1 ]]; then
    step "the prebuilt addon (CAIRNQ_TEST_PREBUILT=1)"
    if ! compgen -G 'cairnq.*.node' >/dev/null; then
        echo "CAIRNQ_TEST_PREBUILT=1, but there is no cairnq.*.node in $PWD" >&2
        exit 1
    fi
    ls -l cairnq.*.node
else
    if [[ $(uname -s)-$(uname -m) == Linux-x86_64 ]]; then
        # The binary the package ships, so the suite and the install proof
        # test what users install.
        step "build the addon as shipped (npm run build:dist)"
        npm run build:dist
    else
        step "build the addon"
        npm run build
    fi

    step "binding.js / binding.d.ts as committed"
    bash scripts/check/bindings.sh
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "no module cycles in crates/core"
python3 scripts/check/module-cycles.py

step "eslint and prettier --check (npm run lint)"
npm run lint

step "type check of lib/ (tsconfig.lib.json)"
npx --no-install tsc -p tsconfig.lib.json

step "cargo test"
cargo test --workspace

step "node tests"
# Explicit file list: the runner's own directory search differs between Node
# versions, and an empty list must fail rather than pass with no test run.
mapfile -t test_files < <(find __test__ -name '*.test.mjs' -not -path '*/node_modules/*' | sort)
if ((${#test_files[@]} == 0)); then
    echo "no *.test.mjs files under __test__/" >&2
    exit 1
fi
node --test --test-concurrency=1 "${test_files[@]}"

if [[ -f __test__/types/tsconfig.json ]]; then
    step "TypeScript declarations"
    npx --no-install tsc -p __test__/types/tsconfig.json --noEmit
fi
