#!/usr/bin/env bash
# `scripts/platforms/darwin-check.sh <name>`: what a Linux host can check of a
# macOS addon it cannot run (darwin-x64, darwin-arm64), read with LLVM's
# Mach-O tools: a 64-bit Mach-O dylib or bundle for the package's CPU; it
# exports the entry point Node calls; it loads only libraries every Mac has
# (libSystem, the libiconv and libcharset Rust's std asks for, and the two
# frameworks whoami names, linked against stubs: scripts/platforms/
# darwin-frameworks); every symbol it imports is bound to libSystem, except
# the napi_* functions, which are left to the node binary that loads it
# (linked with -undefined dynamic_lookup); arm64 carries the ad-hoc code
# signature Apple silicon requires of every binary. Prints "N passed, N
# failed".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/platforms/lib.sh

name=${1:?usage: darwin-check.sh <darwin-x64|darwin-arm64>}
triple=$(triple_of "$name")
binary="npm/$name/cairnq.$name.node"
[[ -f $binary ]] || {
    echo "$binary is missing: npm run build:platform -- $name" >&2
    exit 1
}
# Debian's LLVM 14 reads Mach-O files of both CPUs.
apt_install llvm-14
objdump=llvm-objdump-14
nm=llvm-nm-14

# Mach-O's names of the CPU.
case $triple in
x86_64-*) cpu=X86_64 ;;
aarch64-*) cpu=ARM64 ;;
esac

header=$("$objdump" --macho --private-header "$binary")
if grep -Eq "^ *MH_MAGIC_64 +$cpu .* (DYLIB|BUNDLE) " <<<"$header"; then
    verdict ok "$name: a 64-bit Mach-O $(grep -Eo '(DYLIB|BUNDLE)' <<<"$header" | head -n 1) for $cpu"
else
    verdict fail "$name: not a 64-bit Mach-O dylib or bundle for $cpu" "$header"
fi

exports=$("$nm" --extern-only --defined-only "$binary")
if grep -Eq ' T _napi_register_module_v1$' <<<"$exports"; then
    verdict ok "$name: exports _napi_register_module_v1"
else
    verdict fail "$name: no _napi_register_module_v1 among its exports" "$exports"
fi

# The libraries it loads (LC_LOAD_DYLIB), not its own name (LC_ID_DYLIB).
loads=$("$objdump" --macho --private-headers "$binary" |
    awk '/cmd LC_LOAD_DYLIB$/ { load = 1 } load && $1 == "name" { print $2; load = 0 }')
stray=$(grep -Exv '/usr/lib/lib(System\.B|iconv\.2|charset\.1)\.dylib|/System/Library/Frameworks/(CoreFoundation|SystemConfiguration)\.framework/Versions/A/(CoreFoundation|SystemConfiguration)' <<<"$loads" || true)
if grep -qx /usr/lib/libSystem.B.dylib <<<"$loads" && [[ -z $stray ]]; then
    verdict ok "$name: loads $(wc -l <<<"$loads") libraries, each one every Mac has"
else
    verdict fail "$name: loads a library a Mac may not have, or not libSystem" "$loads"
fi

# One line an import: "(undefined) external _name (from libSystem)", or no
# library named for those the loading process provides.
imports=$("$nm" -m --undefined-only "$binary")
stray=$(grep -v ' (from libSystem)$' <<<"$imports" |
    grep -Ev ' external _(napi|node_api)_[A-Za-z0-9_]+$' || true)
if [[ -n $imports && -z $stray ]]; then
    verdict ok "$name: $(wc -l <<<"$imports") imports, each from libSystem or a napi_* function of node"
else
    verdict fail "$name: imports neither from libSystem nor napi_* of node" "$stray"
fi

if [[ $cpu == ARM64 ]]; then
    if "$objdump" --macho --private-headers "$binary" | grep -q 'cmd LC_CODE_SIGNATURE$'; then
        verdict ok "$name: code-signed (Apple silicon runs only signed code)"
    else
        verdict fail "$name: no code signature; Apple silicon would refuse to load it"
    fi
fi

echo "$passed passed, $failed failed"
((failed == 0))
