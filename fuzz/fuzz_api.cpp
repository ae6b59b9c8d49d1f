// fuzz_api: a libFuzzer target that drives tandem's public API on the CPU backend with fuzzed shapes,
// strides, lds, offsets, kernel names, options and sizes (0, 1, small, and huge values near SIZE_MAX,
// PTRDIFF_MAX and PTRDIFF_MAX / sizeof(T)).
//
// For every call the harness decides from the API's contract (include/tandem/*.hpp, docs/API.md) whether
// the input is valid, and hands the library only memory that really is valid for what the input declares:
// when a valid shape is larger than the harness allocates, the pointer is null (so the call must throw).
// Then:
//   - a valid call must return, with the result of a plain loop (sums of integers and of small-integer
//     floats exactly, min/max bit for bit, matmul of small integers exactly), and must write nothing but
//     its output (every array starts filled with a NaN poison that is compared bit for bit afterwards);
//   - an invalid call must throw tandem::Error with a message, and must leave memory untouched.
// Anything else (another exception, a wrong result, a crash, a sanitizer report, a hang) aborts so that
// libFuzzer reports it. TANDEM_FUZZ_VERBOSE=1 prints every call, for reading a reproducer.
//
// The harness (harness.hpp/.cpp) holds the contract and the fuzzed values; each area has its own file:
// fuzz_reduce.cpp, fuzz_matmul.cpp, fuzz_batch.cpp, fuzz_buffer.cpp, fuzz_engine.cpp. This file only reads,
// before each call an input makes, which area and element type (of the dtype table) the call goes to.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <exception>
#include <string>
#include <typeinfo>

#include "harness.hpp"

using namespace tandem_fuzz;

namespace {

// One call of area `what` on element type d: reductions, buffers, or (types matmul takes) a matrix
// product, either the single-matrix fuzzer (arenas shared by A, B and C, overlaps; C of A's type) or the
// batch fuzzer (every matmul type, 16-bit inputs into a float C).
void fuzz_typed(FuzzedDataProvider& in, int what, tandem::Dtype d) {
  if (what <= 3) return fuzz_reduce(d, in);
  if (what <= 5) return fuzz_buffer(d, in);
  if (!tandem::info(d).matmul) return fuzz_reduce(d, in);
  if (what == 6 && tandem::info(d).compute == d) return fuzz_matmul(d, in);
  fuzz_batch(d, in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  try {
    // Up to four calls per input, so that one input can mix operations on the same engine.
    for (int calls = in.ConsumeIntegralInRange<int>(1, 4); calls > 0 && in.remaining_bytes() > 0; --calls) {
      const int what = in.ConsumeIntegralInRange<int>(0, 8);  // 0-3 reduce, 4-5 buffers, 6-7 matmul, 8 engine
      if (what == 8) {
        fuzz_engine(in);
        continue;
      }
      // An element type of the dtype table.
      fuzz_typed(in, what, tandem::dtypes[in.ConsumeIntegralInRange<std::size_t>(0, std::size(tandem::dtypes) - 1)].id);
    }
  } catch (const tandem::Error& e) {
    fail(std::string("tandem::Error escaped the harness: ") + e.what());
  } catch (const std::exception& e) {
    fail(std::string("an exception other than tandem::Error: ") + typeid(e).name() + ": " + e.what());
  } catch (...) {
    fail("an exception other than tandem::Error (not a std::exception)");
  }
  return 0;
}
