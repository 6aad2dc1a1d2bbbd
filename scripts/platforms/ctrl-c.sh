#!/usr/bin/env bash
# `scripts/platforms/ctrl-c.sh <name>`: Ctrl-C stops `worker.serve()` on a
# platform's runtime, the way a terminal delivers it: SIGINT to the runtime's
# process (qemu passes it on; wine turns it into the CTRL_C_EVENT Windows
# programs get). A handler is in flight then; serve() must let it finish and
# return, and the process exit 0. Runs __test__/platform/serve-until-ctrl-c.mjs
# through scripts/platforms/run-on.sh; prints "N passed, N failed".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/platforms/lib.sh

name=${1:?usage: ctrl-c.sh <platform name>}
work=$(mktemp -d)
runner=
trap '[[ -z $runner ]] || kill "$runner" 2>/dev/null; rm -rf "$work"' EXIT

bash scripts/platforms/run-on.sh "$name" __test__/platform/serve-until-ctrl-c.mjs "$work/queue.db" "$work/started" \
    >"$work/log" 2>&1 &
runner=$!
for _ in $(seq 1 1200); do
    [[ -f $work/started ]] || ! kill -0 "$runner" 2>/dev/null && break
    sleep 0.1
done
status=0
if [[ -f $work/started ]]; then
    kill -INT "$runner"
    wait "$runner" || status=$?
else
    status=timeout
fi
runner=
if [[ $status == 0 ]] && grep -q '^serve() returned; the task in flight: succeeded$' "$work/log"; then
    verdict ok "$name: Ctrl-C stopped serve(), the handler in flight finished, exit 0"
else
    verdict fail "$name: Ctrl-C and serve(): exit $status" "$(cat "$work/log")"
fi
echo "$passed passed, $failed failed"
((failed == 0))
