#!/usr/bin/env bash
# Fails when binding.js / binding.d.ts in the work tree differ from the
# committed ones. Run right after `npm run build`, which regenerates both
# (`napi build --platform … --js binding.js --dts binding.d.ts`, its `--pipe`
# running scripts/build/loader-libc.mjs on the loader): a difference then means the
# committed files are stale against src/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

files=(binding.js binding.d.ts)

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "not a git work tree: cannot compare ${files[*]} with the committed ones; skipped" >&2
    exit 0
fi

if ! git diff --exit-code -- "${files[@]}"; then
    {
        echo
        echo "error: ${files[*]} differ from what \`npm run build\` (napi build) generates from src/."
        echo "The regenerated files are in the work tree (diff above): commit them with the change to src/."
    } >&2
    exit 1
fi
echo "${files[*]}: up to date"
