# shellcheck shell=bash
# Sourced by the platform scripts: the platform names, the cache outside the
# clone, and the installs they share (Debian packages, npm tarballs).
# Cross builds and emulated runs fetch toolchains and runtimes once into
# $CAIRNQ_PLATFORM_CACHE, so a second CI run on one machine skips them.

cache=${CAIRNQ_PLATFORM_CACHE:-/var/cache/cairnq-platforms}
mkdir -p "$cache"

# napi-rs platform name -> Rust target triple.
declare -A platform_triple=(
    [linux-x64-gnu]=x86_64-unknown-linux-gnu
    [linux-arm64-gnu]=aarch64-unknown-linux-gnu
    [win32-x64-msvc]=x86_64-pc-windows-gnu
    [linux-x64-musl]=x86_64-unknown-linux-musl
    [linux-arm64-musl]=aarch64-unknown-linux-musl
    [darwin-x64]=x86_64-apple-darwin
    [darwin-arm64]=aarch64-apple-darwin
)

triple_of() {
    local name=$1
    if [[ -z ${platform_triple[$name]:-} ]]; then
        echo "unknown platform '$name'; known: ${!platform_triple[*]}" >&2
        exit 2
    fi
    printf '%s\n' "${platform_triple[$name]}"
}

# Installs the Debian packages that are missing (root; CI runs as root),
# under a lock: platforms/all.sh builds one target while another's suite starts.
apt_install() {
    (
        flock 9
        local missing=() pkg
        for pkg in "$@"; do
            dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
        done
        ((${#missing[@]} > 0)) || exit 0
        if [[ " ${missing[*]} " == *:arm64* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
            dpkg --add-architecture arm64
        fi
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    ) 9>"$cache/apt.lock"
}

# Unpacks an npm package (name@version) into $cache/npm/<name@version> once;
# prints that directory (the tarball's package/ folder).
npm_unpacked() {
    local spec=$1 dir="$cache/npm/${1//\//+}"
    if [[ ! -f $dir/.done ]]; then
        rm -rf "$dir" && mkdir -p "$dir"
        (cd "$dir" && npm pack --silent "$spec" >/dev/null && tar -xzf ./*.tgz && rm ./*.tgz)
        touch "$dir/.done"
    fi
    printf '%s/package\n' "$dir"
}

# zig (a C compiler and linker with its own musl for each architecture)
# and cargo-zigbuild from PyPI, in a venv of the cache; prints its bin dir,
# whose python runs zig as `python -m ziglang`.
zig_version=0.17.0
cargo_zigbuild_version=0.24.0
zig_toolchain() {
    local venv="$cache/toolchains/zig-$zig_version-zigbuild-$cargo_zigbuild_version"
    if [[ ! -f $venv/.done ]]; then
        rm -rf "$venv"
        python3 -m venv --help >/dev/null 2>&1 || apt_install python3 python3-venv >&2
        python3 -m venv "$venv" >&2
        "$venv/bin/pip" install -q "ziglang==$zig_version" "cargo-zigbuild==$cargo_zigbuild_version" >&2
        touch "$venv/.done"
    fi
    printf '%s/bin\n' "$venv"
}

# A musl libstdc++.so.6 and libgcc_s.so.1 for <arch> (x86_64, aarch64), taken
# from a musllinux_1_1 wheel that bundles them, plus the compat shim for what
# they lack (musl/libstdcxx-compat.c); prints the directory.
musl_cxx_wheel=kiwisolver==1.4.5
musl_cxx_libs() {
    local arch=$1 dir="$cache/musl-cxx-$1"
    if [[ ! -f $dir/.done ]]; then
        rm -rf "$dir" && mkdir -p "$dir/wheel"
        python3 -m pip download -q --no-deps --only-binary=:all: --platform "musllinux_1_1_$arch" \
            --python-version 3.11 -d "$dir/wheel" "$musl_cxx_wheel" >&2
        # auditwheel names them <lib>-<hash>.so.<version> in <package>.libs/,
        # and libstdc++ asks for libgcc_s by that name: both names are kept.
        python3 -c '
import os, re, sys, zipfile
out, wheel = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    for member in z.namelist():
        for stem, soname in (("libstdc++", "libstdc++.so.6"), ("libgcc_s", "libgcc_s.so.1")):
            if re.fullmatch(r"[^/]+\.libs/" + re.escape(stem) + r"-[0-9a-f]+\.so\.[0-9.]+", member):
                name = os.path.basename(member)
                open(f"{out}/{name}", "wb").write(z.read(member))
                os.symlink(name, f"{out}/{soname}")
' "$dir" "$dir"/wheel/*.whl
        rm -rf "$dir/wheel"
        [[ -f $dir/libstdc++.so.6 && -f $dir/libgcc_s.so.1 ]] || {
            echo "$musl_cxx_wheel ($arch) bundles no libstdc++.so.6 and libgcc_s.so.1" >&2
            exit 1
        }
        "$(zig_toolchain)/python" -m ziglang cc -target "$arch-linux-musl" -shared -O2 \
            -o "$dir/libstdcxx-compat.so" "$(dirname "${BASH_SOURCE[0]}")/musl/libstdcxx-compat.c"
        touch "$dir/.done"
    fi
    printf '%s\n' "$dir"
}

# `verdict ok|fail MESSAGE [DETAIL]`: one line a check ("ok - …" or
# "not ok - …", DETAIL indented below), counted in $passed and $failed for
# the closing "N passed, N failed" line.
passed=0
failed=0
verdict() {
    if [[ $1 == ok ]]; then
        passed=$((passed + 1))
        echo "ok - $2"
    else
        failed=$((failed + 1))
        echo "not ok - $2"
        [[ -z ${3:-} ]] || sed 's/^/  /' <<<"$3"
    fi
}
