# shellcheck shell=bash
# Sourced by the install proofs, which install and run the package as a user
# without a Rust toolchain would. `path_without_rust DIR` prints $PATH with
# each directory holding a Rust tool replaced by a mirror (under DIR) of its
# links without the Rust tools: Debian's rustc-web, which the platform builds
# install, puts cargo and rustc in /usr/bin, beside node and bash. Says on
# stderr which directories it mirrored.
path_without_rust() {
    local mirrors_dir=$1 stripped='' mirrors=0 dir tool mirror
    local -a path_dirs
    IFS=: read -r -a path_dirs <<<"$PATH"
    for dir in "${path_dirs[@]}"; do
        [[ -z $dir ]] && continue
        if [[ -e $dir/cargo || -e $dir/rustc || -e $dir/rustup ]]; then
            mirrors=$((mirrors + 1))
            mirror=$mirrors_dir/$mirrors
            mkdir -p "$mirror"
            for tool in "$dir"/*; do
                case ${tool##*/} in
                cargo | cargo-* | rustc | rustdoc | rustup | rustfmt | rust-* | clippy-driver) ;;
                *) ln -s "$tool" "$mirror/${tool##*/}" ;;
                esac
            done
            echo "without its Rust tools: $dir" >&2
            dir=$mirror
        fi
        stripped=${stripped:+$stripped:}$dir
    done
    if PATH=$stripped bash -c 'command -v cargo || command -v rustc' >/dev/null; then
        echo "cargo or rustc is still reachable through PATH=$stripped" >&2
        return 1
    fi
    printf '%s\n' "$stripped"
}
