#!/bin/sh
# Installs what build.sh made, with the headers, a pkg-config file and a CMake
# package:
#
#   $INCLUDEDIR/clangoffload.h, clangoffload.hpp
#   $LIBDIR/libclangoffload.a, libclangoffload.so{,.X,.X.Y.Z}
#   $LIBDIR/pkgconfig/clangoffload.pc
#   $LIBDIR/cmake/clangoffload/clangoffloadConfig{,Version}.cmake
#
# under $DESTDIR (staging; not written into any file). LIBRARY_TYPES picks the
# libraries ("static shared", the default, or one of them: with only the
# archive installed, `pkg-config --static --libs` gives a static link, as
# cargo-c's --library-type does). With STRIP=1 the libraries lose their debug
# information. UNINSTALL=1 removes these files.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
OUT=${OUT:-$target/capi}
PREFIX=${PREFIX:-/usr/local}
LIBDIR=${LIBDIR:-$PREFIX/lib}
INCLUDEDIR=${INCLUDEDIR:-$PREFIX/include}
DESTDIR=${DESTDIR:-}
LIBRARY_TYPES=${LIBRARY_TYPES:-static shared}
CC=${CC:-cc}

case $PREFIX$LIBDIR$INCLUDEDIR in
  *'@'* | *'|'*) echo "install.sh: @ and | are not allowed in paths" >&2; exit 1 ;;
esac
for dir in "$PREFIX" "$LIBDIR" "$INCLUDEDIR"; do
  case $dir in /*) ;; *) echo "install.sh: $dir is not an absolute path" >&2; exit 1 ;; esac
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
major=${version%%.*}
so=libclangoffload.so.$version
cmakedir=$LIBDIR/cmake/clangoffload
files="$INCLUDEDIR/clangoffload.h $INCLUDEDIR/clangoffload.hpp
  $LIBDIR/libclangoffload.a $LIBDIR/$so $LIBDIR/libclangoffload.so.$major
  $LIBDIR/libclangoffload.so $LIBDIR/pkgconfig/clangoffload.pc
  $cmakedir/clangoffloadConfig.cmake $cmakedir/clangoffloadConfigVersion.cmake"

if [ "${UNINSTALL:-0}" = 1 ]; then
  for f in $files; do rm -f "$DESTDIR$f"; done
  rmdir "$DESTDIR$cmakedir" 2>/dev/null || true
  exit 0
fi

# A path under the prefix as CMake finds it from the package's own location,
# so that the installed tree can be moved (or staged with DESTDIR) as a whole.
relative() {
  case $1 in
    "$PREFIX") echo '${_clangoffload_prefix}' ;;
    "$PREFIX"/*) echo "\${_clangoffload_prefix}/${1#"$PREFIX"/}" ;;
    *) echo "$1" ;;
  esac
}
case $cmakedir in
  "$PREFIX"/*)
    up=$(echo "${cmakedir#"$PREFIX"/}" | sed 's|[^/][^/]*|..|g')
    cmake_libdir=$(relative "$LIBDIR")
    cmake_includedir=$(relative "$INCLUDEDIR") ;;
  *) up=. cmake_libdir=$LIBDIR cmake_includedir=$INCLUDEDIR ;;
esac
# The pointer size the library was built for, for CMake's version check.
sizeof_void_p=$(echo __SIZEOF_POINTER__ | "$CC" -E -P - | tr -d ' ')

fill() {
  sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@LIBDIR@|$LIBDIR|g" \
    -e "s|@INCLUDEDIR@|$INCLUDEDIR|g" -e "s|@VERSION@|$version|g" \
    -e "s|@MAJOR@|$major|g" -e "s|@NATIVE_STATIC_LIBS@|$(cat "$OUT/native-static-libs")|g" \
    -e "s|@CMAKEDIR_TO_PREFIX@|$up|g" -e "s|@CMAKE_LIBDIR@|$cmake_libdir|g" \
    -e "s|@CMAKE_INCLUDEDIR@|$cmake_includedir|g" \
    -e "s|@SIZEOF_VOID_P@|$sizeof_void_p|g" "$root/capi/dist/$1"
}

install -d "$DESTDIR$INCLUDEDIR" "$DESTDIR$LIBDIR/pkgconfig" "$DESTDIR$cmakedir"
install -m 644 "$root/include/clangoffload.h" "$root/include/clangoffload.hpp" "$DESTDIR$INCLUDEDIR/"
for type in $LIBRARY_TYPES; do
  case $type in
    static)
      install -m 644 "$OUT/libclangoffload.a" "$DESTDIR$LIBDIR/"
      [ "${STRIP:-0}" = 1 ] && strip --strip-debug "$DESTDIR$LIBDIR/libclangoffload.a" ;;
    shared)
      install -m 755 "$OUT/$so" "$DESTDIR$LIBDIR/"
      ln -sf "$so" "$DESTDIR$LIBDIR/libclangoffload.so.$major"
      ln -sf "$so" "$DESTDIR$LIBDIR/libclangoffload.so"
      [ "${STRIP:-0}" = 1 ] && strip --strip-debug "$DESTDIR$LIBDIR/$so" ;;
    *) echo "install.sh: LIBRARY_TYPES: unknown type $type" >&2; exit 1 ;;
  esac
done
fill clangoffload.pc.in >"$DESTDIR$LIBDIR/pkgconfig/clangoffload.pc"
fill clangoffloadConfig.cmake.in >"$DESTDIR$cmakedir/clangoffloadConfig.cmake"
fill clangoffloadConfigVersion.cmake.in >"$DESTDIR$cmakedir/clangoffloadConfigVersion.cmake"
