// The one interface every backend implements. The engine validates each call before it gets here, so
// a backend may assume: n >= 1 for ops whose empty input is an error (n >= 0 for the others), stride >=
// 1, pointers valid for the extent they describe, ld >= cols, matching shapes, C not overlapping A or B, an
// op the backends run themselves (is_backend_op: never mean, which arrives as sum with `divide`), and a
// kernel (KernelId) that is "auto" or one of its own stages whose KernelInfo accepts the dtype, op and mode.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tandem/types.hpp"

namespace tandem::detail {

// The kernel a call runs, as the engine found it by name in the backend's table: "auto", or the stage at
// index `stage` of the backend's reduce_kernel_info() / matmul_kernel_info() (ladder order, without
// "auto"). Backends run a stage by its row of their own table, never by its name.
struct KernelId {
  static constexpr std::uint32_t automatic = 0xffffffffu;
  std::uint32_t stage = automatic;
  bool is_auto() const noexcept { return stage == automatic; }
};

// n elements data[0], data[stride], ... ; `resident` means data lives in the backend's own memory
// (a Buffer), otherwise in host memory.
struct ReduceArgs {
  Op op;  // an op the backends run (is_backend_op); its result as detail::result_of gives it
  KernelId kernel;
  Dtype dtype;
  const void* data;
  std::int64_t n;
  std::int64_t stride;
  bool resident;
  bool deterministic = false;  // the canonical order of common/canonical.hpp
  // Results that don't wait (Engine::*_into): when `out` is set, the result goes to this address of the
  // backend's memory (a Buffer element), ordered on the backend's stream, and reduce() returns without
  // waiting (detail::store_result: NaN as the canonical quiet NaN). With `divide` (mean, whose op is
  // then sum) the value stored is the double double(sum) / n.
  void* out = nullptr;
  bool divide = false;
};

// A per-row / per-column reduction (Engine::sum(MatrixView, Per, ...)): rows x cols, row-major with ld
// >= cols, in host memory or resident. `per` picks the vectors: each row (cols elements) or each column
// (rows elements); their count is >= 1, their length may be 0 only for sums (results then +0.0 / 0).
// `out` has one result per vector, in the same memory as the input (host or backend), as
// detail::store_result writes it: the op's result (indices as int64, the index within the vector), or
// with `divide` (mean, whose op is then sum) double(sum) / length. Resident calls are stream-ordered (no
// wait); host calls return when out is written.
struct MatrixReduceArgs {
  Op op;  // an op the backends run (is_backend_op)
  KernelId kernel;
  Dtype dtype;
  const void* data;
  std::int64_t rows, cols, ld;
  Per per;
  bool resident;
  bool deterministic = false;  // float sums: each vector's canonical sum (common/canonical.hpp)
  bool divide = false;
};

// C (m x n, ldc) = alpha * op(A) * op(B) + beta * C, all row-major, all in host memory or all resident.
// op(A) is m x k: A is stored m x k (lda >= k), or k x m (lda >= m) with trans_a; likewise op(B) is
// k x n. For e < batch, entry e of each operand starts stride_x elements after entry e - 1 (0: the same
// matrix for every entry; C's entries never overlap). m, n, batch >= 1; k may be 0.
struct MatmulArgs {
  KernelId kernel;
  Dtype dtype;  // A's and B's, a dtype with dtype_traits<T>::matmul; C is compute_t<T> (float for 16-bit A, B)
  // B's type where it differs from A's (a mixed product: A and B two of float, bfloat16 and half, C float).
  // The result is the float product of the converted operands (b_type(), mixed()).
  std::optional<Dtype> mixed_b;
  const void* a;
  const void* b;
  void* c;
  std::int64_t m, k, n;
  std::int64_t lda, ldb, ldc;
  bool resident;
  bool deterministic = false;  // the canonical fma chain and epilogue of common/canonical.hpp
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 0.0;
  Precision precision = Precision::full;  // the lowest precision "auto" may pick
  std::int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;

  Dtype b_type() const { return mixed_b.value_or(dtype); }
  bool mixed() const { return mixed_b.has_value() && *mixed_b != dtype; }
  // The plain product C = A * B of one entry: the form every stage computes.
  bool plain() const { return !trans_a && !trans_b && alpha == 1.0 && beta == 0.0 && batch == 1; }
};

// The engine's elementwise pass over resident data, for ReduceOptions::where and var / std of Buffers
// (engine/masked.cpp, engine/moments.cpp): for each element (r, c) of a rows x cols input of `dtype` at
// data (element (r, c) at r * ld + c * stride: a vector is one row), out[r * cols + c] =
//   keep ? Out(x) - Out(shift) : fill   (Out: out_dtype; "- Out(shift)" only where shift is given),
// keep = mask[r * cols + c] (nullptr: every element). out_dtype is dtype (a masked copy: no shift), or the
// float type var_result_t or double of it. shift, where given, is doubles: shift[0] for every element
// (Shift::one), shift[r] (Shift::row) or shift[c] (Shift::col). fill holds one out_dtype value. data,
// mask, shift and out are backend memory; the pass is ordered on the backend's stream without waiting.
// Every step is one conversion or one rounded subtraction: the same bits on every backend
// (common/select.hpp).
struct SelectArgs {
  enum class Shift { none, one, row, col };
  Dtype dtype;
  const void* data;
  std::int64_t rows, cols, ld, stride;
  const bool* mask = nullptr;
  const double* shift = nullptr;
  Shift shift_kind = Shift::none;
  Dtype out_dtype;
  void* out;
  unsigned char fill[8] = {};
};

// Top-k of resident data (Engine::topk of Buffers): `lines` lines of `length` elements of `dtype`, element i of
// line l at data[l * line_step + i * step]; the k most extreme of each (largest, or smallest) in topk's order
// (engine/topk.cpp: NaN first, then by value, equal values by index), most extreme first: result r of line l
// into values[l * values_line + r * values_step] (the elements themselves) and indices[...] (int64, the same
// layout with the indices' steps). All of it backend memory, ordered on the backend's stream without waiting.
struct TopkArgs {
  Dtype dtype;
  const void* data;
  std::int64_t lines, length, line_step, step, k;
  bool largest;
  void* values;
  std::int64_t values_line, values_step;
  std::int64_t* indices;
  std::int64_t indices_line, indices_step;
  // argsort: every index of each line in ascending order (NaN last); k is the length, values null, largest unused.
  bool argsort = false;
};

// The element types of the dtype table, all of them or those matmul takes; every op. For the kernel
// tables of the backends.
inline std::vector<Dtype> every_dtype() {
  std::vector<Dtype> v;
  for (const DtypeInfo& d : dtypes) v.push_back(d.id);
  return v;
}
inline std::vector<Dtype> matmul_dtypes() {
  std::vector<Dtype> v;
  for (const DtypeInfo& d : dtypes)
    if (d.matmul) v.push_back(d.id);
  return v;
}
inline std::vector<Op> every_op() { return {std::begin(all_ops), std::end(all_ops)}; }
// Every op that carries no index (stages that track no index).
inline std::vector<Op> value_ops() {
  std::vector<Op> v;
  for (Op op : all_ops)
    if (!is_arg(op)) v.push_back(op);
  return v;
}

class RankCollectives;

class BackendImpl {
 public:
  virtual ~BackendImpl() = default;

  virtual Backend kind() const noexcept = 0;
  virtual DeviceInfo device() const = 0;
  // The device's index (a CUDA device number; the CPU's is EngineOptions::device, 0 by default) and the
  // native stream its work is ordered on (a cudaStream_t; nullptr on the CPU), for the collectives of a
  // multi-device engine (engine/multi_device.cpp).
  virtual int device_index() const noexcept { return 0; }
  virtual void* native_stream() const noexcept { return nullptr; }

  // Every stage with what it accepts, in ladder order, without "auto".
  virtual std::vector<KernelInfo> reduce_kernel_info() const = 0;
  virtual std::vector<KernelInfo> matmul_kernel_info() const = 0;

  // Writes the result to *result: an int64_t for integer sums and arg indices, otherwise a value of the
  // input's compute type (compute_t: the input's type, float for 16-bit inputs).
  virtual void reduce(const ReduceArgs& args, void* result) = 0;
  virtual void matmul(const MatmulArgs& args) = 0;
  // A grouped product (Engine::matmul_grouped) of resident operands in one call: args' A and C whole (m: all the
  // groups' rows; stride_a and stride_c unused), B one entry per group (batch entries, stride_b apart) or one for
  // every group (batch 1), group_rows each group's rows in order (adding up to m; some may be 0). false where the
  // backend does not take it (nothing done: the engine runs each group as one product). The default: false.
  virtual bool matmul_grouped(const MatmulArgs& args, std::span<const std::int64_t> group_rows) {
    (void)args, (void)group_rows;
    return false;
  }
  // args.kernel is "auto" (the only kernel whose KernelInfo::per_row_col is set today).
  virtual void reduce_matrix(const MatrixReduceArgs& args, void* out) = 0;

  // The canonical chunk values (common/canonical.hpp, steps 1-3) of a sum-like op (sum; sumsq:
  // of the squares) over n > 0 elements of a floating dtype, stride apart, from data (backend memory when
  // resident, else host memory): chunk_count(n) values of the dtype's compute type into host_values.
  // Returns when they are there (tandem::mpi::Engine combines them across ranks).
  virtual void canonical_chunk_values(Op op, Dtype dtype, const void* data, std::int64_t n, std::int64_t stride,
                                      bool resident, void* host_values) = 0;
  // The same values of resident data into `values`, the backend's memory, ordered on its stream
  // without waiting (multi-device engines gather them on one device). The default suits a backend whose
  // memory is host memory.
  virtual void canonical_chunk_values_resident(Op op, Dtype dtype, const void* data, std::int64_t n,
                                               std::int64_t stride, void* values) {
    canonical_chunk_values(op, dtype, data, n, stride, true, values);
  }

  // Collectives among the ranks of tandem::mpi::Engine, one backend per rank (NCCL on CUDA): rank 0
  // makes the group's id (empty: this backend has none, the ranks use MPI), every rank joins with it
  // (collective; nullptr where the backend has none).
  virtual std::vector<unsigned char> make_rank_group_id() { return {}; }
  virtual std::unique_ptr<RankCollectives> join_rank_group(const std::vector<unsigned char>& id, int rank, int size) {
    (void)id, (void)rank, (void)size;
    return nullptr;
  }

  // The elementwise pass of SelectArgs: on the host for the CPU (host_select, common/select.cpp), on its
  // device for a device backend.
  virtual void select(const SelectArgs& args) = 0;

  // Top-k (and argsort: args.argsort) of resident data on the device; false where this backend does not take
  // it (the engine then computes it on the host, engine/topk.cpp). The default: false.
  virtual bool topk(const TopkArgs& args) {
    (void)args;
    return false;
  }

  // Waits for everything the backend enqueued; throws tandem::Error for a failure of that work.
  virtual void synchronize() = 0;

  // Throws tandem::Error unless [p, p + bytes) is memory this backend's kernels may use (Engine::wrap).
  virtual void check_external(const void* p, std::size_t bytes) const = 0;

  // Backend memory. allocate(0) may return nullptr.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
  virtual void copy_to_backend(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;

  // reduce_kernel_info() and matmul_kernel_info() with "auto" first, made once per backend: the engine
  // checks every call against them (engine/validate.cpp) and finds the KernelId there.
  struct KernelTables {
    std::vector<KernelInfo> reduce, matmul;
  };
  const KernelTables& kernel_tables() const;

 private:
  mutable std::once_flag tables_once_;
  mutable KernelTables tables_;
};

// The data movement between the devices of a multi-device engine (engine/multi_device.cpp): NCCL on
// CUDA (backends/cuda/nccl.cu), memcpy on the CPU. Members are numbered as EngineOptions::devices lists
// them.
class Collectives {
 public:
  virtual ~Collectives() = default;
  // One piece of a broadcast: `bytes` at src, memory of member `root`, go to offset `offset` of every
  // member's destination.
  struct Piece {
    int root;
    const void* src;
    std::size_t offset, bytes;
  };
  // All pieces in one group (ncclGroupStart/End: one thread drives every device), each member's part
  // ordered on its stream (nothing waits); dst[m] is member m's destination.
  virtual void broadcast(const std::vector<Piece>& pieces, const std::vector<void*>& dst) = 0;
  // bytes from member src_member's memory to member dst_member's, after all work enqueued on both
  // members; returns when the copy is done.
  virtual void copy(void* dst, int dst_member, const void* src, int src_member, std::size_t bytes) = 0;

  // A pipelined exchange beside the members' work (matmul's pieces of B while the products run). One
  // transfer: `bytes` from src (member `from`'s memory) to dst (member `to`'s).
  struct Transfer {
    int from;
    const void* src;
    int to;
    void* dst;
    std::size_t bytes;
  };
  // Enqueues one step of transfers on each member's side stream (a second stream per member, which first
  // waits for the work the member's stream holds now; NCCL sends and receives in one group, a member's own
  // pieces copied) and returns the step's number for wait_side(). Nothing waits.
  virtual std::size_t send_side(const std::vector<Transfer>& transfers) = 0;
  // Member `member`'s stream waits (the host does not) for what it received in `step`.
  virtual void wait_side(std::size_t step, int member) = 0;
  // Every member's stream waits for everything on its side stream (its sends too); the steps end.
  virtual void join_side() = 0;
};

// One rank's member of the collectives among the ranks of tandem::mpi::Engine (NCCL: ncclCommInitRank).
class RankCollectives {
 public:
  virtual ~RankCollectives() = default;
  // An allgather in two steps, so that a failure on one rank is caught before any rank enters the
  // collective: stage() takes this rank's `bytes` from send (host memory; may throw), exchange() puts
  // every rank's into recv (host memory, size * bytes, rank order) and returns when they are there.
  virtual void stage(const void* send, std::size_t bytes) = 0;
  virtual void exchange(void* recv) = 0;
  // Sums `count` elements of a floating dtype elementwise over the ranks, in place at data (this rank's
  // device memory when on_device, else host memory; every rank passes the same count and dtype):
  // deterministic, by common/all_reduce.hpp's definition; else ncclAllReduce's sum. Returns when done.
  // prepare_all_reduce() first, with the same arguments, on every rank (collectively: it may throw, out of
  // memory say): it waits for this rank's earlier work and takes the memory, so that all_reduce() itself
  // cannot fail on one rank while the others wait in NCCL.
  virtual void prepare_all_reduce(Dtype dtype, std::size_t count, bool on_device, bool deterministic) = 0;
  virtual void all_reduce(Dtype dtype, void* data, std::size_t count, bool on_device, bool deterministic) = 0;
};

// ---- what the registry (engine/registry.cpp) takes from each backend, and what a backend may call back ----

struct Probe {
  bool compiled_in = false;
  bool usable = false;
  std::string reason;  // why not usable, or what was found
  int devices = 0;     // the devices it found (CUDA GPUs; 1 for the CPU)
};

#define TANDEM_DECLARE_BACKEND(name, ...) \
  Probe name##_probe();                   \
  std::shared_ptr<BackendImpl> make_##name##_backend(const EngineOptions&);
TANDEM_BACKENDS(TANDEM_DECLARE_BACKEND)
#undef TANDEM_DECLARE_BACKEND

// Multi-device engines (engine/multi_device.cpp), the columns of the table below: the number of CUDA
// devices (0 without the CUDA module), NCCL collectives over CUDA members (throws without NCCL), and the
// host collectives of CPU members (stand-ins for devices, for tests).
int cuda_device_count();
std::unique_ptr<Collectives> make_nccl_collectives(const std::vector<std::shared_ptr<BackendImpl>>& members);
std::unique_ptr<Collectives> make_host_collectives(const std::vector<std::shared_ptr<BackendImpl>>& members);
// NCCL among the MPI ranks of tandem::mpi::Engine (a CUDA rank's backend): the unique id (empty without
// NCCL) and this rank's member (device, stream: the rank's engine's).
std::vector<unsigned char> nccl_unique_id();
std::unique_ptr<RankCollectives> make_nccl_ranks(int device, void* stream, const std::vector<unsigned char>& id,
                                                 int rank, int size);

}  // namespace tandem::detail
