// given(f): whether a table row's function pointer is set, for the tables' static_asserts (a row without
// its function does not compile). Under GCC's UndefinedBehaviorSanitizer a function's address compared
// with nullptr is no constant expression, so there (TANDEM_UBSAN, set by CMake's TANDEM_SANITIZE) the check
// is left to the other builds, which CI compiles too.
#pragma once

namespace tandem::detail {

template <class F>
constexpr bool given(F* f) {
#ifdef TANDEM_UBSAN
  (void)f;
  return true;
#else
  return f != nullptr;
#endif
}

}  // namespace tandem::detail
