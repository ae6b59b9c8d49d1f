// What the parts of the conformance matrix share: running one case (a result, or the tandem::Error it
// must throw), poison values, and the bytes of results for the cross-backend comparison.
#pragma once

#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "verify/conformance.hpp"
#include "verify/kernels.hpp"
#include "verify/verdict.hpp"

namespace tandem_verify::conformance {

// The backend's name, for reports and keys.
inline std::string backend_name(const tandem::Engine& eng) { return tandem::to_string(eng.backend()); }

// The bytes of values, as a key's bits.
template <class T>
std::string bytes_of(const T* values, std::size_t count) {
  static_assert(std::is_trivially_copyable_v<T>);
  return std::string(reinterpret_cast<const char*>(values), count * sizeof(T));
}

// Padding that no kernel may read: NaN for floating types, the type's largest value otherwise, or with
// `huge` the largest finite value of any type (whose products and sums overflow).
template <class T>
T poison(bool huge) {
  using C = tandem::compute_t<T>;
  if constexpr (std::is_floating_point_v<C>)
    return huge ? T(std::numeric_limits<C>::max()) : T(std::numeric_limits<C>::quiet_NaN());
  else
    return std::numeric_limits<T>::max();
}
// The largest finite value of a 16-bit type as a float (bfloat16: float's largest rounded; half: 65504).
template <>
inline tandem::half poison<tandem::half>(bool huge) {
  return huge ? tandem::half::from_bits(0x7bff) : tandem::half(std::numeric_limits<float>::quiet_NaN());
}
template <>
inline tandem::bfloat16 poison<tandem::bfloat16>(bool huge) {
  return huge ? tandem::bfloat16::from_bits(0x7f7f) : tandem::bfloat16(std::numeric_limits<float>::quiet_NaN());
}

// The verdict of `count` results: "" when judge(v) is "" for each v, else "<each> v: " and judge's words for the
// first wrong one (each: "row", "column", or nullptr for a single result, which needs no prefix).
template <class Judge>
std::string first_wrong(std::size_t count, const char* each, Judge&& judge) {
  for (std::size_t v = 0; v < count; ++v)
    if (std::string bad = judge(v); !bad.empty())
      return each ? std::string(each) + " " + std::to_string(v) + ": " + bad : bad;
  return {};
}
inline const char* slice_name(tandem::Per per) { return per == tandem::Per::row ? "row" : "column"; }

// One case: `call` either returns (then `check` judges it: "" when right, else what was wrong) or throws
// tandem::Error, which it must exactly when `refused`. A kernel whose KernelInfo says it does not run here
// (runs_here: this machine lacks its requirement) must throw an error that names the requirement instead:
// counted as unavailable.
template <class Call, class Check>
void one_case(Report& report, const tandem::Engine& eng, const std::string& what, bool refused,
              const tandem::KernelInfo& kernel, Call&& call, Check&& check) {
  const std::string backend = backend_name(eng);
  std::string problem;
  try {
    auto got = call();
    problem = refused             ? "returned a result; tandem::Error expected"
              : !kernel.runs_here ? "returned a result; its KernelInfo says it does not run here (" +
                                        kernel.requirement + "), so tandem::Error expected"
                                  : check(got);
  } catch (const tandem::Error& e) {
    if (refused) {
      ++report.refused;
    } else if (!kernel.runs_here) {
      if (!kernel.requirement.empty() && std::string(e.what()).find(kernel.requirement) != std::string::npos) {
        ++report.unavailable;
        return;
      }
      problem = "threw tandem::Error without naming its requirement '" + kernel.requirement + "': " + e.what();
    } else {
      problem = std::string("threw tandem::Error: ") + e.what();
    }
  } catch (const std::exception& e) {
    problem = std::string("threw ") + e.what() + " (not a tandem::Error)";
  }
  if (problem.empty())
    report.pass(backend);
  else
    report.fail(backend, what + ": " + problem);
}

}  // namespace tandem_verify::conformance
