// Plain value types of the public API: backends, errors, operations, views, options and kernel metadata.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tandem/dtype.hpp"
#include "tandem/error.hpp"
#include "tandem/export.hpp"
#include "tandem/ops.hpp"

namespace tandem {

// ---- Backends -------------------------------------------------------------------------------------
// The table of backends, X(name, auto_priority, label, device, units, ...): the Backend enumerators, their
// names, TANDEM_BACKEND parsing, the auto choice (the usable backend of highest priority) and its
// reason in words (label: the backend's name in prose, device: what it runs on, units: what its
// DeviceInfo::compute_units counts), backend_status(), the
// CLI's --backend and words, Python's names and the per-backend test runs all come from it (through
// `backends` below). Each backend provides <name>_probe() and make_<name>_backend() (engine/registry.cpp).
// Arguments after X are passed on to every X(...).
#define TANDEM_BACKENDS(X, ...)                            \
  X(cpu, 0, "CPU", "CPU", "hardware threads", __VA_ARGS__) \
  X(cuda, 10, "CUDA", "CUDA GPU", "multiprocessors (SMs)", __VA_ARGS__)

enum class Backend {
#define TANDEM_BACKEND_ENUMERATOR(name, ...) name,
  TANDEM_BACKENDS(TANDEM_BACKEND_ENUMERATOR)
#undef TANDEM_BACKEND_ENUMERATOR
};

// One row of the table.
struct BackendInfo {
  Backend id;
  const char* name;    // "cuda": TANDEM_BACKEND, --backend, tandem.Engine('cuda')
  int auto_priority;   // auto picks the usable backend with the highest
  const char* label;   // the backend in prose: "CUDA"
  const char* device;  // what it runs on, in prose: "CUDA GPU"
  const char* units;   // what DeviceInfo::compute_units counts: "multiprocessors (SMs)"
};

// One BackendInfo per backend, indexed by Backend.
inline constexpr BackendInfo backends[] = {
#define TANDEM_BACKEND_ROW(name_, priority_, label_, device_, units_, ...) \
  {Backend::name_, #name_, priority_, label_, device_, units_},
    TANDEM_BACKENDS(TANDEM_BACKEND_ROW)
#undef TANDEM_BACKEND_ROW
};

inline constexpr Backend all_backends[] = {
#define TANDEM_BACKEND_VALUE(name, ...) Backend::name,
    TANDEM_BACKENDS(TANDEM_BACKEND_VALUE)
#undef TANDEM_BACKEND_VALUE
};

constexpr const BackendInfo& info(Backend b) { return backends[static_cast<std::size_t>(b)]; }

// "cpu" or "cuda".
TANDEM_API const char* to_string(Backend b) noexcept;

// The backend named `name` ("cpu", "cuda"); "auto" (or "") gives auto_backend().backend. Throws
// tandem::Error naming the valid values for anything else.
TANDEM_API Backend parse_backend(std::string_view name);

// The backend TANDEM_BACKEND names, as Engine() picks it: "cpu", "cuda", or "auto" (also when unset:
// auto_backend()). Throws tandem::Error naming the variable and the valid values for anything else.
TANDEM_API Backend backend_from_env();

// ---- Operations ---------------------------------------------------------------------------------
// Op, its names and its table: include/tandem/ops.hpp.

// Per-row / per-column reductions of a matrix (Engine::sum(MatrixView, Per, out), ...): Per::row gives one
// result per row (each row reduced as a vector), Per::col one per column.
enum class Per : std::uint8_t { row, col };
constexpr const char* to_string(Per p) { return p == Per::row ? "row" : "col"; }

// The precision a matmul kernel computes in: full (the element type's own), or inputs rounded to tf32
// or bf16 with float accumulation (tensor cores).
enum class Precision : std::uint8_t { full, tf32, bf16 };
constexpr const char* to_string(Precision p) {
  return p == Precision::full ? "full" : p == Precision::tf32 ? "tf32" : "bf16";
}

// What a kernel guarantees about the bits of its floating-point results (sums and products, whose value
// depends on the order of their roundings; integer sums, min, max, argmin and argmax are exact in any
// order), the levels CCCL names for its algorithms:
//   not_guaranteed  two identical calls may give different bits (a dynamic split of the work), or the same
//                   values at another address may (CUB's vector loads of aligned input)
//   run_to_run      identical calls on the same machine give the same bits, at any address of the data
//                   (the same thread count; the same GPU model and library versions)
//   every_backend   the same bits on every backend, run, thread count and GPU: the canonical order of
//                   deterministic mode (common/canonical.hpp)
// In deterministic mode (ReduceOptions / MatmulOptions::deterministic) every kernel that takes it gives
// every_backend; KernelInfo::determinism is the level of the default mode.
enum class Determinism : std::uint8_t { not_guaranteed, run_to_run, every_backend };
constexpr const char* to_string(Determinism d) {
  return d == Determinism::not_guaranteed ? "not_guaranteed"
         : d == Determinism::run_to_run   ? "run_to_run"
                                          : "every_backend";
}

// ---- Views ----------------------------------------------------------------------------------------

// A row-major matrix: element (i, j) is data[i * ld + j]; ld >= cols, or for the per-row / per-column
// reductions ld 0: every row is the first one (a broadcast row).
template <class T>
struct MatrixView {
  T* data;
  std::size_t rows, cols, ld;

  // A MatrixView<T> is usable wherever a MatrixView<const T> is expected.
  operator MatrixView<const T>() const requires(!std::is_const_v<T>) { return {data, rows, cols, ld}; }
};

// `count` row-major matrices of host memory, `stride` elements apart: matrix e starts at
// data + e * stride, and its element (i, j) is data[e * stride + i * ld + j]. stride 0 repeats one matrix
// for every entry of a batch (A and B only).
// A second, outer batch dimension (NumPy's batch shapes of two dimensions, e.g. a permuted or broadcast
// batch whose strides do not merge into one): outer_count runs of `count` matrices, outer_stride elements
// apart; entry (o, e) starts at data + o * outer_stride + e * stride. Set it with .outer(count, stride).
template <class T>
struct BatchView {
  T* data;
  std::size_t rows, cols, ld, count, stride;
  std::size_t outer_count = 1, outer_stride = 0;

  // This batch as each entry of an outer dimension of `n` entries, `step` elements apart (0: the same
  // batch for every outer entry, a broadcast).
  BatchView outer(std::size_t n, std::size_t step) const {
    BatchView v = *this;
    v.outer_count = n, v.outer_stride = step;
    return v;
  }
  operator BatchView<const T>() const requires(!std::is_const_v<T>) {
    return {data, rows, cols, ld, count, stride, outer_count, outer_stride};
  }
};

// `count` elements of host memory, `stride` elements apart: data[0], data[stride], ... (stride 0:
// data[0] count times, a broadcast). One column of a row-major matrix is StridedView{&m[0][j], rows, ld}.
template <class T>
struct StridedView {
  const T* data;
  std::size_t count;
  std::size_t stride = 1;
};

// The view of one field of an array of structs, e.g. field(std::span(particles), &Particle::mass).
template <class S, class T>
StridedView<T> field(std::span<const S> items, T S::*member) {
  static_assert(sizeof(S) % sizeof(T) == 0, "the struct size must be a multiple of the field size");
  if (items.empty()) return {nullptr, 0, sizeof(S) / sizeof(T)};
  return {&(items[0].*member), items.size(), sizeof(S) / sizeof(T)};
}

// ---- Options --------------------------------------------------------------------------------------

struct ReduceOptions {
  std::string kernel = "auto";  // one of Engine::reduce_kernels()
  // Bitwise-identical results on every backend, run, thread count and GPU: the sum runs in one fixed
  // association order (docs in common/canonical.hpp). Needs a kernel whose KernelInfo says
  // deterministic ("auto" always does).
  bool deterministic = false;
  // NumPy's where=: only the elements whose entry is true take part. One bool per element of the input, in
  // its order: where[i] for element i of a vector view; where[r * cols + c] for element (r, c) of a
  // MatrixView (rows * cols entries, packed, whatever the matrix's ld). Empty: every element. The masked
  // elements are replaced by the op's identity (0 for the sums, 1 for prod, the type's greatest value for min
  // and its least for max), and the op runs on the result, so deterministic mode's bits are the same on every
  // backend and equal to the Python module's where= (but for integer means). mean divides the masked sum by the
  // number of true entries (an integer input's sum exact, where Python's where= sums integers in float64); min and max
  // need `initial` (they have no identity: NumPy's rule); argmin / argmax take no mask. The mask is in host memory for
  // every input: a Buffer's masked copy is made where the Buffer lies (the mask uploaded first, which waits for
  // the upload); per-row / per-column means of a Buffer finish on the host (an integer input's exact sums: from
  // a downloaded copy). Not for the *_into calls.
  std::span<const bool> where = {};
  // NumPy's initial=: the reduction's first element, for the ops whose result is a sum or an element (sum,
  // sumsq, prod, min, max). The result is combined with it by one more operation (add, multiply, minimum,
  // maximum) in the result type; an empty input (or every element masked) gives `initial`. It is converted
  // to the result type: rounded for a float result; an integer result takes only integers in its range. Not
  // for mean, argmin / argmax, var / std, the *_into calls or tandem::mpi::Engine. Per row / column into a
  // Buffer, the results are combined with it in host memory (the call waits).
  std::optional<long double> initial = {};  // (long double: every 64-bit integer exactly)
};

// tandem::mpi::Engine::all_reduce.
struct AllReduceOptions {
  // Every element's contributions added in rank order, in the compute type (float for 16-bit elements),
  // rounded once (docs/API.md): the same bits whatever the transport (NCCL or MPI), NCCL's
  // algorithm, protocol and channel count, the topology or the message size, for a given number of ranks.
  // Otherwise the transport's own sum (ncclAllReduce, MPI_Allreduce), whose association order may change
  // with any of those.
  bool deterministic = false;
};

// Engine::topk: the k largest elements (largest, the default) or the k smallest.
struct TopkOptions {
  bool largest = true;
};

// C = alpha * op(A) * op(B) + beta * C, where op(X) is X (as its MatrixView stores it) or, with trans_x,
// its transpose. beta == 0: C is only written, never read (NaN in C does not leak, as in BLAS).
// alpha == 0 or an empty inner dimension: the product is not computed: C = beta == 0 ? 0 : beta * C.
// Column-major callers: a column-major matrix is the row-major view of its transpose, and
// C^T = op(B)^T op(A)^T, so pass B as `a` and A as `b` with the same trans flags and C's own ld.
struct MatmulOptions {
  std::string kernel = "auto";  // one of Engine::matmul_kernels()
  // Bitwise-identical results on every backend: each C(i, j) in the canonical order (common/canonical.hpp):
  // one fma chain per chunk of 4096 k (K <= 4096: one chain over k = 0 .. K-1), the chunk values summed in
  // the canonical order of sums, then the canonical epilogue. 16-bit inputs, and float inputs where
  // `precision` allows tf32, take chains of tensor-core k-steps instead of fma chains (the arithmetic of
  // Hopper's tensor cores: common/tensor_core.hpp, docs/API.md). Batch-invariant: an element depends only on
  // its row of op(A), column of op(B) and C. Needs a kernel whose KernelInfo says deterministic ("auto"
  // always does).
  bool deterministic = false;
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 0.0;  // converted to the element type
  // The lowest precision "auto" may pick: full never picks a tf32/bf16 stage, tf32 allows tf32 stages,
  // bf16 allows tf32 and bf16 stages (float only; double always runs in full precision). A kernel named
  // in `kernel` runs as named whatever this says. Deterministic mode computes float products in full
  // precision (fma chains) where this is full, and in the tensor-core arithmetic of tf32 inputs (each float
  // rounded to tf32) where it is tf32 or bf16 (common/tensor_core.hpp, docs/API.md).
  Precision precision = Precision::full;
};

// ---- Engines ---------------------------------------------------------------------------------------

// Where an engine runs, for applications with their own devices and streams.
struct EngineOptions {
  // The GPU (CUDA device index). -1: TANDEM_DEVICE if set (a GPU index; anything else is an error),
  // else device 0. The CPU backend has one device and ignores it.
  int device = -1;
  // A cudaStream_t of the caller's (the public headers include no CUDA header): every operation of the
  // engine is ordered on it, so the engine's work fits between the application's own kernels and can be
  // captured into a CUDA graph. nullptr: the engine makes its own non-blocking stream. The CPU backend
  // ignores it. The caller keeps the stream alive as long as the engine and its Buffers.
  void* stream = nullptr;
  // Several GPUs in one engine: their CUDA device indices, e.g. {0, 1, 2, 3} (distinct). Empty: the
  // environment variable TANDEM_DEVICES if set ("all", or a list such as "0,1,3"), else one device as
  // above. With two or more, reductions and matmul run on all of them and Buffers are sharded across
  // them (docs/SCALING.md); a list of one is that device alone. Not together with `device`, and with two
  // or more not with `stream` (TANDEM_DEVICES is not read when `device` or `stream` is set).
  // On the CPU backend each listed device is another CPU engine over the same host (no speed-up; it runs
  // the multi-device path without GPUs, for tests); TANDEM_DEVICES does not apply to it.
  std::vector<int> devices;
};

// ---- What a backend and its kernels are -----------------------------------------------------------

// One device a backend runs on.
struct DeviceInfo {
  std::string name;       // e.g. "NVIDIA H100 80GB HBM3" or the CPU model
  int compute_units = 0;  // CPU hardware threads TBB uses, or GPU multiprocessors
  std::size_t memory_bytes = 0;
  double peak_bandwidth_gbs = 0;  // theoretical memory bandwidth where known, else 0
  std::string details;            // e.g. "sm_90, 50 MiB L2"
  int index = 0;                  // the backend's device index: the CUDA device ordinal (EngineOptions::devices)
};

// The precision a kernel that rounds its inputs to `rounding` (Precision::full: rounds nothing) computes
// element type d in: `rounding`, or full where d's values are exact in that format (bfloat16 and half
// values are exact in tf32; bfloat16 values in bf16).
constexpr Precision precision_for(Dtype d, Precision rounding) {
  auto bits = [](Precision p) { return p == Precision::tf32 ? 10 : p == Precision::bf16 ? 7 : 64; };
  const int own = d == Dtype::bf16 ? 7 : d == Dtype::f16 ? 10 : d == Dtype::f32 ? 23 : 64;  // significand bits
  return own > bits(rounding) ? rounding : Precision::full;
}

// What one kernel (a stage of a ladder, a vendor baseline, or "auto") accepts and promises. The engine
// rejects a call the kernel does not accept (dtype, op, deterministic) before it reaches the backend.
struct KernelInfo {
  std::string name;
  std::vector<Dtype> dtypes;  // the element types it takes
  std::vector<Op> ops;        // reductions: the ops it runs; empty for matmul kernels
  // The precision it computes each element type of `dtypes` in, in that order: full, or the inputs rounded
  // to tf32 or bf16 (a tensor-core stage's float inputs; its 16-bit inputs are exact in those formats).
  std::vector<Precision> precisions;
  Precision precision = Precision::full;  // the lowest of `precisions` (its float inputs')
  bool deterministic = false;             // deterministic mode may run it (its results follow the canonical order)
  Determinism determinism = Determinism::not_guaranteed;  // the bits of its default mode (Determinism)
  bool auto_pick = false;                                 // "auto" may pick it
  bool baseline = false;                                  // a vendor library (CUB, cuBLAS), the reference of the ladder
  bool per_row_col = false;  // per-row / per-column reductions (Engine::sum(MatrixView, Per, ...)) run it
  std::string requirement;   // what it needs beyond the backend, in words, e.g. "compute capability 9.0"
  // Whether it runs here: in an engine's tables, on the engine's device (false: a call throws
  // tandem::Error naming the requirement); in tables read without a device (tandem::reduce_kernel_info(
  // Backend)), whether it needs nothing beyond the backend (requirement is empty).
  bool runs_here = true;
  // Matmul kernels: whether it multiplies bfloat16 and half inputs as stored, in the tensor cores' 16-bit
  // format (its 16-bit products' bits need not be its float products' on the same values); false: its 16-bit
  // products are the float product of the converted values (the CPU's, and the stages that widen first).
  bool native_16bit = false;

  bool accepts(Dtype d) const {
    for (Dtype x : dtypes)
      if (x == d) return true;
    return false;
  }
  bool accepts(Op op) const {
    for (Op x : ops)
      if (x == op) return true;
    return false;
  }
  // The precision it computes element type d in (full for a type it does not take).
  Precision precision_of(Dtype d) const {
    for (std::size_t i = 0; i < dtypes.size() && i < precisions.size(); ++i)
      if (dtypes[i] == d) return precisions[i];
    return Precision::full;
  }
};

}  // namespace tandem
