#!/usr/bin/env bash
# CI's platform step (.ci/run, after `npm test`): builds every platform package
# the project ships and runs, on each under its own runtime (emulated where it
# is not this machine's), the platform suite (__test__/platform/suite.mjs) and
# a Ctrl-C to serve() (scripts/platforms/ctrl-c.sh). macOS binaries cannot
# run here: they get the checks a Linux host can make instead
# (scripts/platforms/darwin-check.sh).
# One build at a time (two cores); each target's suite runs while the next
# target builds. Toolchains, runtimes and cargo's target dir are cached in
# $CAIRNQ_PLATFORM_CACHE (scripts/platforms/lib.sh), so a second run on the
# same machine rebuilds little.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# The targets CI verifies; package.json's napi.targets and npm/ list the same.
platforms=(linux-x64-gnu linux-arm64-gnu win32-x64-msvc linux-x64-musl linux-arm64-musl darwin-x64 darwin-arm64)

logs=$(mktemp -d)
suite_pid=
suite_name=
# A failed build ends the run: its background suite goes with it.
trap '[[ -z $suite_pid ]] || kill "$suite_pid" 2>/dev/null; rm -rf "$logs"' EXIT

# Waits for the suite running in the background, prints its output.
finish_suite() {
    [[ -n $suite_pid ]] || return 0
    local status=0
    wait "$suite_pid" || status=$?
    printf '\n==> platform suite on %s (exit %s)\n' "$suite_name" "$status"
    cat "$logs/$suite_name.log"
    suite_pid=
    return "$status"
}

failed=()
for name in "${platforms[@]}"; do
    printf '\n==> build %s\n' "$name"
    started=$SECONDS
    bash scripts/build/platform.sh "$name"
    printf '    (built in %ss)\n' "$((SECONDS - started))"
    finish_suite || failed+=("$suite_name")
    suite_name=$name
    {
        if [[ $name == darwin-* ]]; then
            bash scripts/platforms/darwin-check.sh "$name"
        else
            bash scripts/platforms/run-on.sh "$name" __test__/platform/suite.mjs &&
                bash scripts/platforms/ctrl-c.sh "$name" &&
                if [[ $name == linux-x64-gnu ]]; then
                    # Deno 2, the third runtime, on this machine's target.
                    printf '\n==> the same under Deno (%s)\n' "$(node_modules/.bin/deno --version | head -1)"
                    CAIRNQ_RUNTIME=deno bash scripts/platforms/run-on.sh "$name" __test__/platform/suite.mjs &&
                        CAIRNQ_RUNTIME=deno bash scripts/platforms/ctrl-c.sh "$name"
                fi
        fi
    } >"$logs/$name.log" 2>&1 &
    suite_pid=$!
done
finish_suite || failed+=("$suite_name")

if ((${#failed[@]})); then
    echo "platform suite failed on: ${failed[*]}" >&2
    exit 1
fi
echo "platform suite passed on: ${platforms[*]}"
