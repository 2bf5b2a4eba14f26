// Which sanitizer this build runs under, for the few tests that size their data by it (gcc says
// __SANITIZE_THREAD__, clang __has_feature).
#ifndef RPLASMA_TESTS_SUPPORT_SANITIZER_H_
#define RPLASMA_TESTS_SUPPORT_SANITIZER_H_

namespace rplasma::testing {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_SANITIZER_H_
