// One device's executor (engine/executor.hpp): every call validated here, once, then dispatched to the
// backend: the kernel tables with "auto" (also read without an engine, tandem::reduce_kernel_info(Backend)),
// the checks of inputs, outputs and kernels, and the translation of a call into the backend's arguments
// (ReduceArgs, MatrixReduceArgs, MatmulArgs).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "common/backend.hpp"
#include "common/dispatch.hpp"
#include "common/modules.hpp"
#include "common/reduce_ops.hpp"
#include "engine/executor.hpp"
#include "engine/extent.hpp"

namespace tandem {

using detail::batch_extent;
using detail::matrix_extent;
using detail::require_nonempty;

namespace {
std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}
}  // namespace

std::vector<std::string> detail::kernel_names(const std::vector<KernelInfo>& infos) {
  std::vector<std::string> names;
  for (const auto& k : infos) names.push_back(k.name);
  return names;
}

// ---- kernels and their metadata --------------------------------------------------------------------

namespace {

// "auto": every dtype and op any stage takes, deterministic, full precision, and the weakest determinism
// of the stages it may pick.
KernelInfo auto_info(const std::vector<KernelInfo>& stages) {
  KernelInfo a{
      .name = "auto", .precision = Precision::full, .deterministic = true, .determinism = Determinism::every_backend};
  for (const KernelInfo& k : stages) {
    if (k.auto_pick) a.determinism = std::min(a.determinism, k.determinism);
    for (Dtype d : k.dtypes)
      if (!a.accepts(d)) a.dtypes.push_back(d);
    for (Op o : k.ops)
      if (!a.accepts(o)) a.ops.push_back(o);
  }
  std::sort(a.dtypes.begin(), a.dtypes.end());
  std::sort(a.ops.begin(), a.ops.end());
  return a;
}

std::vector<KernelInfo> with_auto(std::vector<KernelInfo> stages) {
  stages.insert(stages.begin(), auto_info(stages));
  return stages;
}

// The kernel's info, or a tandem::Error listing the valid names. `what` is "reduce" or "matmul".
const KernelInfo& find_kernel(const std::vector<KernelInfo>& infos, const std::string& name, const char* what) {
  for (const auto& k : infos)
    if (k.name == name) return k;
  std::vector<std::string> names = detail::kernel_names(infos);
  throw value_error(std::string("unknown ") + what + " kernel '" + name + "'; valid names are " + join(names));
}

// Rejects at the edge what the kernel does not take: the element type, the op, deterministic mode.
void check_kernel_accepts(const KernelInfo& k, Dtype dtype, const Op* op, bool deterministic, const char* call) {
  if (!k.accepts(dtype))
    throw type_error(std::string(call) + ": kernel '" + k.name + "' does not take " + to_string(dtype) + " (it takes " +
                     [&] {
                       std::string s;
                       for (Dtype d : k.dtypes) s += std::string(s.empty() ? "" : ", ") + to_string(d);
                       return s;
                     }() +
                     "); use kernel \"auto\" or one whose KernelInfo lists " + to_string(dtype));
  if (op && !k.accepts(*op))
    throw value_error(std::string(call) + ": kernel '" + k.name + "' does not run " + to_string(*op) +
                      "; use kernel \"auto\" or one whose KernelInfo lists it");
  if (deterministic && !k.deterministic)
    throw value_error(std::string(call) +
                      ": deterministic mode runs its own canonical-order kernel; leave kernel = \"auto\" "
                      "(got '" +
                      k.name + "')");
}

// The tables an engine checks its calls against, from a backend's stages: "auto" first.
detail::BackendImpl::KernelTables tables_of(std::vector<KernelInfo> reduce, std::vector<KernelInfo> matmul) {
  detail::BackendImpl::KernelTables t{with_auto(std::move(reduce)), with_auto(std::move(matmul))};
  t.reduce.front().per_row_col = true;  // per-row / per-column reductions run "auto" on every backend
  return t;
}

// A backend's tables without an engine or a device (tandem::reduce_kernel_info(Backend)). One case per
// backend of TANDEM_BACKENDS (-Werror=switch: a backend added there and not here does not compile).
detail::BackendImpl::KernelTables device_free_tables(Backend backend) {
  switch (backend) {
    case Backend::cpu:  // built into libtandem; making one touches no device
      return detail::make_cpu_backend(EngineOptions{.device = 0})->kernel_tables();
    case Backend::cuda: {  // the module's stage tables, fixed information that needs no GPU
      std::string why;
      const detail::CudaModule* m = detail::cuda_module(&why);
      if (m == nullptr)
#ifdef TANDEM_HAS_CUDA
        throw Error("tandem: the CUDA kernel tables come from the CUDA module (no GPU is needed to read them): " + why +
                    ". Install the libtandem_cuda.so built with this libtandem, with the CUDA libraries it links "
                    "(cuBLAS) where the loader finds them");
#else
        throw Error("tandem: the CUDA kernel tables cannot be read: " + why);
#endif
      return tables_of(m->reduce_kernel_info(), m->matmul_kernel_info());
    }
  }
  throw Error("tandem: unknown backend id " + std::to_string(int(backend)));
}

}  // namespace

const detail::BackendImpl::KernelTables& detail::BackendImpl::kernel_tables() const {
  std::call_once(tables_once_, [this] { tables_ = tables_of(reduce_kernel_info(), matmul_kernel_info()); });
  return tables_;
}

std::vector<KernelInfo> reduce_kernel_info(Backend backend) { return device_free_tables(backend).reduce; }
std::vector<KernelInfo> matmul_kernel_info(Backend backend) { return device_free_tables(backend).matmul; }

// ---- validation helpers ------------------------------------------------------------------------------

namespace {

// The number of elements from the first to the last one a strided view touches, or throws.
std::size_t extent(std::size_t count, std::size_t stride, std::size_t elem, const char* what) {
  if (count == 0) return 0;
  if (stride == 0) throw value_error(std::string(what) + ": stride must be >= 1 (got 0)");
  const std::size_t limit = std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / elem;
  if (count - 1 > (limit - 1) / stride)
    throw value_error(std::string(what) + ": count * stride overflows the address space");
  return (count - 1) * stride + 1;
}

bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  return detail::overlap(reinterpret_cast<std::uintptr_t>(a), a_bytes, reinterpret_cast<std::uintptr_t>(b), b_bytes);
}

const void* offset_by(const void* base, std::size_t elements, Dtype d) {
  return static_cast<const char*>(base) + elements * size_of(d);
}

}  // namespace

// ---- reductions ----------------------------------------------------------------------------------

namespace {

// Checks a reduction's input; returns the address of its first element.
const void* checked_input(const detail::BackendImpl& impl, const detail::ReduceInput& in, const char* name) {
  const std::size_t elem = size_of(in.dtype);
  if (!in.in_buffer) {
    extent(in.count, in.stride, elem, name);
    if (in.count > 0 && in.data == nullptr)
      throw value_error(std::string(name) + ": data is null but count is " + std::to_string(in.count));
    return in.data;
  }
  if (in.count == 0) return in.data;
  if (in.allocation == nullptr)
    throw value_error(std::string(name) + ": the BufferView has no buffer but count is " + std::to_string(in.count));
  if (&in.allocation->impl() != &impl)
    throw value_error(std::string(name) + ": the buffer belongs to another engine (" +
                      to_string(in.allocation->backend()) + "); use buffers from the engine that runs the operation");
  const std::size_t ext = extent(in.count, in.stride, elem, name);
  if (in.offset > in.buffer_size || ext > in.buffer_size - in.offset)
    throw value_error(std::string(name) + ": the view (offset " + std::to_string(in.offset) + ", count " +
                      std::to_string(in.count) + ", stride " + std::to_string(in.stride) +
                      ") reaches past the buffer of " + std::to_string(in.buffer_size) + " elements");
  return offset_by(in.data, in.offset, in.dtype);
}

}  // namespace

void detail::SingleDevice::check_reduce(Op op, const detail::ReduceInput& in, const ReduceOptions& opts) const {
  const char* name = to_string(op);
  checked_input(*impl_, in, name);
  const KernelInfo& kernel = find_kernel(impl_->kernel_tables().reduce, opts.kernel, "reduce");
  check_kernel_accepts(kernel, in.dtype, &op, opts.deterministic, name);
}

void detail::SingleDevice::reduce(Op op, const detail::ReduceInput& in, const ReduceOptions& opts, void* result) const {
  const char* name = to_string(op);
  const void* data = checked_input(*impl_, in, name);
  const KernelInfo& kernel = find_kernel(impl_->kernel_tables().reduce, opts.kernel, "reduce");
  check_kernel_accepts(kernel, in.dtype, &op, opts.deterministic, name);
  require_nonempty(op, in.count, name);

  // The result as the op table says (include/tandem/ops.hpp): the backend runs op's computed_as and
  // writes its result (detail::result_of); mean divides it by n.
  detail::visit(in.dtype, [&]<class T>(std::type_identity<T>) {
    visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using R = op_result_t<O, T>;
      constexpr Op computed = info(O).computed_as;
      if (in.count == 0) {  // EmptyRule::zero
        const R zero{};
        std::memcpy(result, &zero, sizeof zero);
        return;
      }
      const detail::ReduceArgs args{
          computed, in.dtype, data, std::int64_t(in.count), std::int64_t(in.stride), in.in_buffer, opts.deterministic};
      detail::backend_result_t<computed, T> r{};
      impl_->reduce(args, opts.kernel, &r);
      if constexpr (info(O).result == ResultKind::mean) {
        // double(r) / n: for integers the exact sum (while it fits in int64), for floats the sum in the
        // input's compute precision (float for 16-bit inputs). One quiet NaN on every backend.
        const double m = detail::canonical_nan(double(r) / double(in.count));
        std::memcpy(result, &m, sizeof m);
      } else if constexpr (info(O).result == ResultKind::index) {
        if (r < 0 || std::uint64_t(r) >= in.count)
          throw Error(std::string(name) + ": the backend returned index " + std::to_string(r) + " for " +
                      std::to_string(in.count) + " elements (a bug in tandem; please report it)");
        const std::size_t i = std::size_t(r);
        std::memcpy(result, &i, sizeof i);
      } else {
        const R v = detail::canonical_nan(R(r));
        std::memcpy(result, &v, sizeof v);
      }
    });
  });
}

void detail::SingleDevice::reduce_into(Op op, const detail::ReduceInput& in, const detail::OutSlot& out,
                                       const ReduceOptions& opts) const {
  const std::string name = std::string(to_string(op)) + "_into";
  const void* data = checked_input(*impl_, in, name.c_str());
  if (out.allocation == nullptr)
    throw value_error(name + ": the output Buffer is empty; make it with Engine::buffer<R>(n) (n > index) or wrap()");
  if (&out.allocation->impl() != impl_.get())
    throw value_error(name +
                      ": the output Buffer belongs to another engine; use a buffer of the engine that runs the call");
  if (out.index >= out.size)
    throw value_error(name + ": index " + std::to_string(out.index) + " is outside the output Buffer of " +
                      std::to_string(out.size) + " elements");
  require_nonempty(op, in.count, name);
  const KernelInfo& kernel = find_kernel(impl_->kernel_tables().reduce, opts.kernel, "reduce");
  check_kernel_accepts(kernel, in.dtype, &op, opts.deterministic, name.c_str());

  detail::ReduceArgs args{info(op).computed_as, in.dtype, data, std::int64_t(in.count), std::int64_t(in.stride), true,
                          opts.deterministic};
  args.out = static_cast<char*>(out.allocation->data()) + out.index * size_of(out.dtype);
  args.divide = info(op).result == ResultKind::mean;
  impl_->reduce(args, opts.kernel, nullptr);  // n == 0 (EmptyRule::zero): the backend stores 0
}

// ---- matrix inputs (per-row / per-column reductions and matmul) -----------------------------------

namespace {

struct Mat {
  const void* data;
  std::size_t rows, cols, ld, count, stride, extent;  // extent: elements from the first to the last
};

// Checks a matrix (or batch) input: shape, extent, and for a Buffer its engine and bounds; the address
// of its first element (null data of host matrices is the caller's check). `what` names it in messages.
Mat checked_matrix(const detail::BackendImpl& impl, const detail::MatrixInput& v, const std::string& what) {
  if (v.count == 0) throw value_error(what + ": the batch has count 0; a batch needs count >= 1");
  const std::size_t one = matrix_extent(v.rows, v.cols, v.ld, size_of(v.dtype), what);
  const std::size_t ext = batch_extent(one, v.count, v.stride, size_of(v.dtype), what);
  if (!v.in_buffer) return {v.data, v.rows, v.cols, v.ld, v.count, v.stride, ext};
  if (ext == 0) return {nullptr, v.rows, v.cols, v.ld, v.count, v.stride, 0};
  if (v.allocation == nullptr)
    throw value_error(what + " has no buffer but " + std::to_string(v.rows) + "x" + std::to_string(v.cols) +
                      " elements");
  if (&v.allocation->impl() != &impl)
    throw value_error(what +
                      "'s buffer belongs to another engine; use buffers from the engine that runs the operation");
  if (v.offset > v.buffer_size || ext > v.buffer_size - v.offset)
    throw value_error(
        what + " (offset " + std::to_string(v.offset) + ", " + std::to_string(v.rows) + "x" + std::to_string(v.cols) +
        ", ld " + std::to_string(v.ld) +
        (v.count > 1 ? ", count " + std::to_string(v.count) + ", stride " + std::to_string(v.stride) : "") +
        ") reaches past its buffer of " + std::to_string(v.buffer_size) + " elements");
  return {offset_by(v.data, v.offset, v.dtype), v.rows, v.cols, v.ld, v.count, v.stride, ext};
}

std::string shape(const Mat& m, bool trans) {
  return std::to_string(m.rows) + "x" + std::to_string(m.cols) +
         (trans ? " (transposed: " + std::to_string(m.cols) + "x" + std::to_string(m.rows) + ")" : "");
}

}  // namespace

// ---- per-row / per-column reductions --------------------------------------------------------------

void detail::SingleDevice::reduce_per(Op op, Per per, const detail::MatrixInput& in, const detail::ReduceOutput& out,
                                      const ReduceOptions& opts) const {
  const std::string name = std::string(to_string(op)) + " (per " + to_string(per) + ")";
  const std::size_t elem = size_of(in.dtype);
  const Mat mat = checked_matrix(*impl_, in, name + ": the matrix");
  const void* data = mat.data;
  const std::size_t ext = mat.extent;
  if (!in.in_buffer && ext > 0 && data == nullptr)
    throw value_error(name + ": data is null but the matrix has " + std::to_string(in.rows) + "x" +
                      std::to_string(in.cols) + " elements");
  const std::size_t count = per == Per::row ? in.rows : in.cols, length = per == Per::row ? in.cols : in.rows;
  // A span holds exactly one result per row (column); a Buffer at least that many, from element 0.
  if (out.in_buffer ? out.size < count : out.size != count)
    throw value_error(name + ": the output has " + std::to_string(out.size) + " elements but the matrix has " +
                      std::to_string(count) + (per == Per::row ? " rows" : " columns") + "; pass one result per " +
                      (per == Per::row ? "row" : "column") +
                      (out.in_buffer ? " (a Buffer of at least that many)" : ""));
  void* out_data = out.data;
  if (out.in_buffer && count > 0) {
    if (out.allocation == nullptr)
      throw value_error(name + ": the output Buffer is empty; make it with Engine::buffer<R>(" + std::to_string(count) +
                        ")");
    if (&out.allocation->impl() != impl_.get())
      throw value_error(name +
                        ": the output Buffer belongs to another engine; use a buffer of the engine that runs the call");
    out_data = out.allocation->data();
  } else if (count > 0 && out_data == nullptr) {
    throw value_error(name + ": the output span is null but has " + std::to_string(count) + " elements");
  }
  if (overlaps(out_data, count * out.element_size, data, ext * elem))
    throw value_error(name + ": the output overlaps the matrix; the results must go to separate memory");
  const KernelInfo& kernel = find_kernel(impl_->kernel_tables().reduce, opts.kernel, "reduce");
  if (!kernel.per_row_col) {
    std::string names;
    for (const KernelInfo& k : impl_->kernel_tables().reduce)
      if (k.per_row_col) names += std::string(names.empty() ? "" : ", ") + "'" + k.name + "'";
    throw value_error(name + ": kernel '" + kernel.name + "' does not run per-row / per-column reductions; use " +
                      names + " (KernelInfo::per_row_col)");
  }
  check_kernel_accepts(kernel, in.dtype, &op, opts.deterministic, name.c_str());
  if (length == 0 && count > 0 && info(op).empty == EmptyRule::error)
    throw value_error(name + " of an empty " + (per == Per::row ? "row" : "column") + " is undefined (the matrix is " +
                      std::to_string(in.rows) + "x" + std::to_string(in.cols) +
                      "); check for an empty dimension first");
  if (count == 0) return;
  detail::MatrixReduceArgs args{
      info(op).computed_as, in.dtype, data,         std::int64_t(in.rows), std::int64_t(in.cols),
      std::int64_t(in.ld),  per,      in.in_buffer, opts.deterministic};
  args.divide = info(op).result == ResultKind::mean;
  impl_->reduce_matrix(args, opts.kernel, out_data);
}

void detail::SingleDevice::synchronize() const { impl_->synchronize(); }

std::shared_ptr<detail::Allocation> detail::SingleDevice::wrap(void* data, std::size_t count,
                                                               std::size_t element_size) const {
  if (count > 0) impl_->check_external(data, count * element_size);
  return std::make_shared<detail::Allocation>(impl_, count > 0 ? data : nullptr, count * element_size);
}

std::shared_ptr<detail::Allocation> detail::SingleDevice::allocate(std::size_t count, std::size_t element_size) const {
  return std::make_shared<detail::Allocation>(impl_, count * element_size);
}

// ---- matmul ---------------------------------------------------------------------------------------

void detail::SingleDevice::matmul(const detail::MatrixInput& ain, const detail::MatrixInput& bin,
                                  const detail::MatrixInput& cin, const MatmulOptions& opts) const {
  const Dtype dtype = ain.dtype;
  const Mat a = checked_matrix(*impl_, ain, "matmul: A"), b = checked_matrix(*impl_, bin, "matmul: B"),
            c = checked_matrix(*impl_, cin, "matmul: C");
  const KernelInfo& kernel = find_kernel(impl_->kernel_tables().matmul, opts.kernel, "matmul");
  check_kernel_accepts(kernel, dtype, nullptr, opts.deterministic, "matmul");
  // op(A) is m x k, op(B) is k x n.
  const std::size_t m = opts.trans_a ? a.cols : a.rows, k = opts.trans_a ? a.rows : a.cols;
  const std::size_t kb = opts.trans_b ? b.cols : b.rows, n = opts.trans_b ? b.rows : b.cols;
  if (k != kb || c.rows != m || c.cols != n) {
    std::ostringstream msg;
    msg << "matmul: shapes do not match: A is " << shape(a, opts.trans_a) << ", B is " << shape(b, opts.trans_b)
        << ", C is " << c.rows << "x" << c.cols << "; need op(A).cols == op(B).rows, C = op(A).rows x op(B).cols";
    throw value_error(msg.str());
  }
  const char* names[] = {"A", "B", "C"};
  const Mat* ms[] = {&a, &b, &c};
  for (int i = 0; i < 3; ++i) {
    if (ms[i]->extent > 0 && ms[i]->data == nullptr)
      throw value_error(std::string("matmul: ") + names[i] + ".data is null but " + names[i] + " has " +
                        std::to_string(ms[i]->rows) + "x" + std::to_string(ms[i]->cols) + " elements");
    if (i < 2 && ms[i]->count != c.count && ms[i]->stride != 0)
      throw value_error(std::string("matmul: batch ") + names[i] + " has count " + std::to_string(ms[i]->count) +
                        " but C has " + std::to_string(c.count) + "; give it C's count, or stride 0 to use one " +
                        names[i] + " for every entry");
  }
  const std::size_t c_one = c.rows == 0 || c.cols == 0 ? 0 : (c.rows - 1) * c.ld + c.cols;
  if (c.count > 1 && c_one > 0 && c.stride < c_one)
    throw value_error("matmul: batch C's entries overlap (stride " + std::to_string(c.stride) + " < " +
                      std::to_string(c_one) + " elements of one C); each entry of C needs its own memory");
  if (!std::isfinite(opts.alpha) || !std::isfinite(opts.beta))
    throw value_error("matmul: alpha and beta must be finite numbers (got alpha " + std::to_string(opts.alpha) +
                      ", beta " + std::to_string(opts.beta) + ")");
  if (cin.dtype != info(dtype).compute)
    throw type_error(std::string("matmul: C must hold ") + to_string(info(dtype).compute) + " for " + to_string(dtype) +
                     " A and B, not " + to_string(cin.dtype));
  const std::size_t e = size_of(dtype), ec = size_of(cin.dtype);
  if (overlaps(c.data, c.extent * ec, a.data, a.extent * e) || overlaps(c.data, c.extent * ec, b.data, b.extent * e))
    throw value_error("matmul: C overlaps A or B; the output must be separate memory");
  if (c.rows == 0 || c.cols == 0) return;
  detail::MatmulArgs args{dtype,
                          a.data,
                          b.data,
                          const_cast<void*>(c.data),
                          std::int64_t(m),
                          std::int64_t(k),
                          std::int64_t(n),
                          std::int64_t(a.ld),
                          std::int64_t(b.ld),
                          std::int64_t(c.ld),
                          ain.in_buffer,
                          opts.deterministic};
  args.trans_a = opts.trans_a;
  args.trans_b = opts.trans_b;
  args.alpha = opts.alpha;
  args.beta = opts.beta;
  args.precision = opts.precision;
  args.batch = std::int64_t(c.count);
  args.stride_a = a.count == 1 ? 0 : std::int64_t(a.stride);
  args.stride_b = b.count == 1 ? 0 : std::int64_t(b.stride);
  args.stride_c = c.count == 1 ? 0 : std::int64_t(c.stride);
  impl_->matmul(args, opts.kernel);
}

}  // namespace tandem
