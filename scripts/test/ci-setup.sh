#!/usr/bin/env bash
# What the whole suite needs beyond npm's dependencies, installed on a Debian or
# Ubuntu machine; shared by .ci/run and .github/workflows/ci.yml.
#
#   bash scripts/test/ci-setup.sh STEP...     steps: packages, python, postgres
#
#   packages   Debian's postgresql and chromium (the dashboard's browser tests)
#   python     .venv (cairnq[postgres]==0.7.0) and .venv-015 (==0.15.1): the
#              Python SDKs the interop tests run against
#   postgres   a throwaway cluster through scripts/test/postgres.sh
#
# Logs go to stderr; stdout gets one NAME=value line per variable the tests
# read (CAIRNQ_PYTHON, CAIRNQ_PYTHON_015, CAIRNQ_TEST_PG_DSN), in the form both
# `set -a; source FILE` and GitHub's $GITHUB_ENV take.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo=$PWD

log() { printf '%s\n' "$*" >&2; }
as_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

packages() {
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -q -o Acquire::Retries=3 >&2
    # The postgresql package's own cluster is never used: scripts/test/postgres.sh
    # runs a private one, so the service start it may attempt does not matter.
    # chromium is driven by playwright-core; no browser is downloaded.
    as_root apt-get install -y -q -o Acquire::Retries=3 --no-install-recommends postgresql chromium >&2
    chromium --version >&2
}

python_sdk() {
    local dir=$1 version=$2
    python3 -m venv "$dir" >&2
    "$dir/bin/pip" install --quiet "cairnq[postgres]==$version" >&2
    "$dir/bin/python" -c 'import cairnq, asyncpg; print("cairnq", cairnq.__version__, "asyncpg", asyncpg.__version__)' >&2
}

for step in "$@"; do
    case "$step" in
    packages) packages ;;
    python)
        python_sdk .venv 0.7.0
        python_sdk .venv-015 0.15.1
        echo "CAIRNQ_PYTHON=$repo/.venv/bin/python"
        echo "CAIRNQ_PYTHON_015=$repo/.venv-015/bin/python"
        ;;
    postgres) echo "CAIRNQ_TEST_PG_DSN=$(bash scripts/test/postgres.sh start)" ;;
    *)
        log "ci-setup.sh: unknown step '$step' (packages, python, postgres)"
        exit 2
        ;;
    esac
done
