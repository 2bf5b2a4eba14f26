#!/usr/bin/env bash
# deb_test.sh BUILD_DIR LIBDIR
#
# `cpack -G DEB` on BUILD_DIR makes rplasma_<version>_<arch>.deb (into a temporary dir, removed on
# exit; nothing is installed): its control names the package and runtime Depends, and it holds
# the binaries, the client library, the public headers, the CMake package and rplasma.pc under
# /usr. ctest label `install`.
set -euo pipefail

build_dir=$1 libdir=$2

tmp=$(mktemp -d /tmp/rplasma-deb-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "deb_test: FAIL: $*" >&2; exit 1; }

cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$tmp" >"$tmp/cpack.log" 2>&1 \
  || { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
debs=("$tmp"/rplasma_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || fail "expected one rplasma_*.deb in $tmp, found: ${debs[*]}"
deb=${debs[0]}

[[ $(dpkg-deb -f "$deb" Package) == rplasma ]] || fail "Package is not rplasma"
depends=$(dpkg-deb -f "$deb" Depends)
for package in libabsl libxxhash libstdc++6; do
  [[ $depends == *"$package"* ]] || fail "Depends lacks $package: $depends"
done

dpkg-deb -c "$deb" | awk '{print $6}' >"$tmp/contents"
for f in bin/rplasma-store bin/rplasma-manager bin/rplasma bin/rplasma-bench include/rplasma/client.h \
         include/rplasma/client/client.h "$libdir/librplasma_client.so" "$libdir/librplasma_client.a" \
         "$libdir/cmake/rplasma/rplasmaConfig.cmake" "$libdir/cmake/rplasma/rplasmaTargets.cmake" \
         "$libdir/pkgconfig/rplasma.pc"; do
  grep -qx "./usr/$f" "$tmp/contents" || fail "the package has no /usr/$f"
done
echo "deb_test: ok ($(basename "$deb"), Depends: $depends)"
