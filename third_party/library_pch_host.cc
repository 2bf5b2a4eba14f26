// Compiles third_party/library_pch.h once for the build; every static library of the product
// reuses it (third_party/precompiled_headers.cmake).
namespace rplasma::library_pch {
int host() { return 0; }
}  // namespace rplasma::library_pch
