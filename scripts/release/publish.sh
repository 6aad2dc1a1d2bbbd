#!/usr/bin/env bash
# `bash scripts/release/publish.sh [npm publish flags…]`: publishes a release to the
# registry npm is configured for, as the release workflow does and the
# registry proof (scripts/release/registry-proof.sh) checks: each platform package
# under npm/ with its built addon, then the main package, whose manifest
# names them all as optionalDependencies (scripts/release/publish-manifest.mjs).
# Every npm/<name>/cairnq.<name>.node must be in place.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

version=$(node -p 'require("./package.json").version')
for dir in npm/*/; do
    name=$(basename "$dir")
    [[ -f $dir/cairnq.$name.node ]] || {
        echo "$dir/cairnq.$name.node is missing: npm run build:platform -- $name" >&2
        exit 1
    }
done
for dir in npm/*/; do
    (cd "$dir" && npm publish --loglevel=warn --ignore-scripts "$@" >/dev/null)
    echo "published cairnq-$(basename "$dir")@$version"
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
npm pack --loglevel=warn --ignore-scripts --pack-destination "$stage" >/dev/null
tar xzf "$stage/cairnq-$version.tgz" -C "$stage"
node scripts/release/publish-manifest.mjs "$stage/package/package.json"
(cd "$stage/package" && npm publish --loglevel=warn --ignore-scripts "$@" >/dev/null)
echo "published cairnq@$version"
