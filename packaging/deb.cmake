# The Debian package: `cpack -G DEB` in the build dir makes rplasma_<version>_<arch>.deb holding
# everything `cmake --install` lays out, under /usr. One package (daemons, CLI, client library,
# headers, CMake and pkg-config files), as the project is small.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rplasma)
set(CPACK_PACKAGE_VENDOR rplasma)
set(CPACK_PACKAGE_CONTACT "rplasma maintainers <rplasma@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Plasma-style zero-copy object store with RDMA fetch")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_STRIP_FILES ON)  # the build's debug info stays in the build tree
# Runtime Depends come from the binaries and the shared library (dpkg-shlibdeps: abseil,
# xxhash, hiredis, OpenSSL, rdma-core, Open MPI, as built). Building against the package also
# needs these development packages.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libabsl-dev, libxxhash-dev, pkg-config")
include(CPack)
