#!/bin/sh
# Builds the installable C libraries into $OUT (default target/capi):
#
#   libclangoffload.a            one relocatable object, only clangoffload_* global
#   libclangoffload.so.X.Y.Z     soname libclangoffload.so.X, symbols versioned CLANGOFFLOAD_X
#   native-static-libs           what a static link needs after -lclangoffload
#   public-symbols               the exported API, one name per line
#
# `build.sh embedded [alloc]` builds only the embedded archive instead
# (default OUT target/capi-embedded[-alloc]).
#
# Why not cargo's staticlib and cdylib as they are: the staticlib exports every
# symbol of Rust's std (two Rust static libraries in one program then clash or
# silently share one copy), and rustc gives a cdylib its own anonymous version
# script, which cannot be combined with ours. So both libraries are made from
# one prelinked object in which everything but the API is local.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
CARGO=${CARGO:-cargo}
CC=${CC:-cc}
LD=${LD:-ld}
AR=${AR:-ar}
OBJCOPY=${OBJCOPY:-objcopy}
NM=${NM:-nm}
target=${CARGO_TARGET_DIR:-$root/target}
case ${1:-}${2:-} in
  embeddedalloc) OUT=${OUT:-$target/capi-embedded-alloc} ;;
  embedded) OUT=${OUT:-$target/capi-embedded} ;;
  *) OUT=${OUT:-$target/capi} ;;
esac

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
major=${version%%.*}
mkdir -p "$OUT"
work=$OUT/work
rm -rf "$work"
mkdir -p "$work"

# The staticlib alone, asking rustc which system libraries it needs (cargo
# replays the note when nothing changed).
staticlib() {
  (cd "$root" && "$CARGO" rustc --quiet --lib -p clangoffload-capi --crate-type staticlib "$@" \
    -- --print native-static-libs) 2>"$work/rustc.log" || {
    cat "$work/rustc.log" >&2
    exit 1
  }
  sed -n 's/^note: native-static-libs: //p' "$work/rustc.log" | tail -n 1 >"$OUT/native-static-libs"
}

# Prelinks the staticlib $1 into $OUT/libclangoffload.a: one object, keeping
# only what the API reaches, without the bitcode rustc embeds for LTO
# (concatenated by ld -r it is no longer valid bitcode, and linker plugins
# choke on it), and with every symbol but the API local.
prelink() {
  "$NM" -g --defined-only "$1" 2>/dev/null |
    awk 'NF == 3 && $3 ~ /^clangoffload_/ { print $3 }' | sort -u >"$OUT/public-symbols"
  [ -s "$OUT/public-symbols" ] || { echo "build.sh: no clangoffload_ symbols" >&2; exit 1; }
  keep=$(sed 's/^/-u /' "$OUT/public-symbols")
  # shellcheck disable=SC2086 # one -u per symbol
  "$LD" -r --whole-archive --gc-sections $keep "$1" -o "$work/prelinked.o"
  # COMDAT groups are merged by name across a whole link, also when their
  # symbols are local: another Rust library's DW.ref.rust_eh_personality would
  # be dropped in favour of ours, leaving its references dangling. So each
  # group of ours gets a name of its own.
  readelf -g --wide "$work/prelinked.o" |
    sed -n 's/^COMDAT group section .*\[\(.*\)\] contains.*/\1 clangoffload.\1/p' >"$work/groups"
  "$OBJCOPY" --remove-section=.llvmbc --remove-section=.llvmcmd \
    --redefine-syms="$work/groups" \
    --keep-global-symbols="$OUT/public-symbols" "$work/prelinked.o" "$work/clangoffload.o"
  rm -f "$OUT/libclangoffload.a"
  "$AR" rcD "$OUT/libclangoffload.a" "$work/clangoffload.o"
}

case ${1:-} in
  embedded)
    # no_std, panic=abort with LTO; `alloc` adds the handles, writers and zstd
    # decoding on the program's allocator (capi/src/embedded.rs).
    if [ "${2:-}" = alloc ]; then
      staticlib --profile embedded-alloc --no-default-features --features alloc
      prelink "$target/embedded-alloc/libclangoffload_capi.a"
    else
      staticlib --profile embedded --no-default-features
      prelink "$target/embedded/libclangoffload_capi.a"
    fi
    rm -rf "$work"
    exit 0 ;;
  '') ;;
  *) echo "usage: build.sh [embedded [alloc]]" >&2; exit 1 ;;
esac

staticlib --release
native=$(cat "$OUT/native-static-libs")
[ -n "$native" ] || { echo "build.sh: rustc printed no native-static-libs" >&2; exit 1; }
prelink "$target/release/libclangoffload_capi.a"

# The shared library, from the same object.
sed "s/@MAJOR@/$major/" "$root/capi/dist/clangoffload.map.in" >"$work/clangoffload.map"
so=libclangoffload.so.$version
# shellcheck disable=SC2086 # the native libraries are separate words
"$CC" -shared -o "$OUT/$so" "$work/clangoffload.o" \
  -Wl,-soname,libclangoffload.so."$major" \
  -Wl,--version-script="$work/clangoffload.map" \
  -Wl,--gc-sections -Wl,-z,relro -Wl,-z,now -Wl,--as-needed $native
ln -sf "$so" "$OUT/libclangoffload.so.$major"
ln -sf "$so" "$OUT/libclangoffload.so"
printf '%s\n' "$version" >"$OUT/version"
rm -rf "$work"
