// The conformance matrix: every combination of the API's axes, generated from the library's own tables,
// each case checked against the independent references of verify/.
//
//   reductions  op (the op table) x element type (the dtype table) x data (exact, random, NaN / inf,
//               signed zeros; integers over their whole range) x size x layout (contiguous, strided,
//               misaligned start, stride 0: one element read n times, empty; matrices packed, ld > cols
//               with the padding poisoned by NaN or by the type's largest value, misaligned, ld 0: the
//               first row repeated) x form (span, range, StridedView,
//               Buffer, BufferView, *_into, per row, per column, host and Buffer) x every kernel of the
//               backend's KernelInfo table x deterministic off / on
//   addresses   every op x element type x kernel x mode, vectors and per row / per column, the same values
//               at every element-aligned byte offset 0 .. 63 (host and Buffer): results right, and the same
//               bits at every offset wherever the kernel's level promises them (run_to_run or better)
//   moments     var and std: element type x data x size x form (span, misaligned, std::vector, StridedView
//               with stride 3 and 0, per row / per column with ld > cols and ld 0) x where (none, a mask) x
//               ddof 0 / 1 x deterministic off / on, kernel "auto": within the bound of two passes, and in
//               deterministic mode the bits of the documented steps
//   masks       ReduceOptions::where and initial: every op x element type x data x size x form (span, stride 3,
//               stride 0, per row, per column) x mask (none, some, none kept) x initial x kernel x mode: the op
//               over the kept elements with initial first, deterministic floats bit for bit
//   topk        topk and argsort: element type x data (ties, random, NaN / inf / signed zeros) x length x k
//               x largest / smallest x form (span, stride 3, stride 0, per row, per column with padded inputs
//               and outputs): exactly the documented order's indices, the elements' bits, padding untouched;
//               k = 0 and k past the length refused
//   matmul      element type x shape (tails, K = 0) x transpose pair x alpha / beta (beta = 0 over a NaN
//               C) x layout (packed, ld > cols poisoned, batches with gaps, stride-0 B, misaligned) x
//               form (host, Buffer) x every kernel x deterministic off / on; and one product with A, B
//               and C at every element-aligned byte offset 0 .. 63: the same bits wherever the level
//               promises them
//
// A case the kernel's KernelInfo does not take (dtype, op, per row / column, deterministic mode), an empty
// input of an op whose EmptyRule is error must throw tandem::Error; every other case
// must give the reference's result within its documented bound (verify/verdict.hpp), leave the
// padding of C and of the outputs untouched, and in deterministic mode give the bits of the canonical
// order. Deterministic results are also compared bit for bit across forms, kernels and every backend
// run in the same process.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"

namespace tandem_verify::conformance {

struct Options {
  bool quick = false;                     // fewer sizes, shapes and data kinds (sanitizer runs)
  std::vector<tandem::Backend> backends;  // run in this order, in one process
  bool reductions = true, matmul = true;
  std::function<void(const std::string&)> on_failure;  // called with each failure as it happens
};

class Report {
 public:
  std::size_t cases = 0;        // calls checked (results and expected errors)
  std::size_t refused = 0;      // of them, calls that had to throw tandem::Error, and did
  std::size_t unavailable = 0;  // calls of a kernel that does not run here (runs_here), refused naming its requirement
  std::size_t compared = 0;     // deterministic results compared bit for bit with an earlier run of the case
  std::size_t compared_across_backends = 0;
  std::size_t failed = 0;
  std::map<std::string, std::size_t> per_backend;  // cases per backend

  void pass(const std::string& backend) { ++cases, ++per_backend[backend]; }
  void fail(const std::string& backend, const std::string& what);
  // Deterministic mode's bits for `key` (the case without backend, kernel and form) from `source`.
  void deterministic_bits(const std::string& backend, const std::string& key, const std::string& source,
                          std::string bits);
  // Adds `other`'s counts, and its deterministic bits as if its cases had run after this report's.
  void merge(Report&& other);

  Options options;

 private:
  void failure(const std::string& what);
  struct Seen {
    std::string backend, source, bits;
  };
  std::map<std::string, Seen> bits_;
};

// Runs the matrix on every backend of o.backends (each must be usable); its parts run side by side on
// threads of their own, and o.on_failure is called from them, one failure at a time.
Report run(const Options& o);

// The parts (reduce_cases.cpp, address_cases.cpp, moment_cases.cpp, mask_cases.cpp, matmul_cases.cpp).
void run_reductions(const tandem::Engine& eng, Report& report);
void run_addresses(const tandem::Engine& eng, Report& report);
void run_moments(const tandem::Engine& eng, Report& report);  // var and std (moment_cases.cpp)
void run_masks(const tandem::Engine& eng, Report& report);    // where and initial (mask_cases.cpp)
void run_topk(const tandem::Engine& eng, Report& report);     // topk and argsort (topk_cases.cpp)
// The matmul part, one part per element type (so that they run side by side).
using Part = std::function<void(const tandem::Engine&, Report&)>;
std::vector<Part> matmul_parts();
// The grouped products (grouped_cases.cpp), one part per element type and two mixed pairs.
std::vector<Part> grouped_parts();
// Batches of two dimensions (batch_cases.cpp), one part per element type and two mixed pairs.
std::vector<Part> batch_parts();
void run_matmul_addresses(const tandem::Engine& eng, Report& report);

}  // namespace tandem_verify::conformance
