# Downloads the benchmarks share (sourced; never committed): wheels from PyPI
# and Debian packages, each unpacked once into $cache.
#   wheel SPEC     -> the unpacked wheel's directory (pip download --no-deps)
#   debian NAME    -> the unpacked package's directory (apt-get download)
wheel() {
    local dir="$cache/$(tr -c 'A-Za-z0-9._-' _ <<<"$1")"
    if [[ ! -d $dir/x ]]; then
        mkdir -p "$dir"
        python3 -m pip download -q --no-deps -d "$dir" "$1" >&2
        (cd "$dir" && python3 -m zipfile -e ./*.whl x)
    fi
    echo "$dir/x"
}
debian() {
    local dir="$cache/deb-$1"
    if [[ ! -d $dir/x ]]; then
        mkdir -p "$dir"
        (cd "$dir" && apt-get download "$1" >/dev/null 2>&1 && dpkg-deb -x ./*.deb x)
    fi
    echo "$dir/x"
}
