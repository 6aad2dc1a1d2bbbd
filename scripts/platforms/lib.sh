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
# under a lock: platforms.sh builds one target while another's suite starts.
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
