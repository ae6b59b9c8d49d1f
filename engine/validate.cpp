// The checks of every call (engine/validate.hpp): inputs and outputs (sizes, strides, extents, Buffers of
// this engine within their bounds, no overlaps), the op's empty-input rule, the kernel (found in the
// backend's table, taking the element type, op and mode), the options.
#include "engine/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "common/dispatch.hpp"
#include "common/operands.hpp"
#include "engine/extent.hpp"
#include "engine/registry.hpp"

namespace tandem::detail {

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The element types a kernel takes, as a message: "float, double, ...".
Message dtype_list(const KernelInfo& k) {
  Message m;
  for (std::size_t i = 0; i < k.dtypes.size(); ++i) m += Message(i ? ", " : "", k.dtypes[i]);
  return m;
}

// Rejects what the kernel does not take: the element type, the op, deterministic mode. `call` names the call.
void check_kernel_accepts(const KernelInfo& k, Dtype dtype, const Op* op, bool deterministic, const std::string& call) {
  if (!k.accepts(dtype))
    throw type_error(Arg::kernel,
                     Message(call, ": kernel '", k.name, "' does not take ", dtype, " (it takes ", dtype_list(k), ")"),
                     Message("use ", Setting{Arg::kernel, "auto"}, " or one whose ",
                             Setting{Arg::kernel_info, "dtypes"}, " lists ", dtype));
  if (op && !k.accepts(*op))
    throw value_error(
        Arg::kernel, Message(call, ": kernel '", k.name, "' does not run ", to_string(*op)),
        Message("use ", Setting{Arg::kernel, "auto"}, " or one whose ", Setting{Arg::kernel_info, "ops"}, " lists it"));
  if (!k.runs_here)
    throw Error(ErrorKind::failure, Arg::kernel,
                Message(call, ": kernel '", k.name, "' does not run on this device: it needs ", k.requirement),
                Message("use ", Setting{Arg::kernel, "auto"}, " or a kernel whose ",
                        Setting{Arg::kernel_info, "runs_here"}, " is set"));
  if (deterministic && !k.deterministic)
    throw value_error(
        Arg::deterministic,
        Message(call, ": deterministic mode runs a canonical-order kernel, and '", k.name, "' is not one"),
        Message("leave ", Setting{Arg::kernel, "auto"}, " (or name a kernel whose ",
                Setting{Arg::kernel_info, "deterministic"}, " is set)"));
}

const KernelInfo& kernel_info(const std::vector<KernelInfo>& table, KernelId id) {
  return table[id.is_auto() ? 0 : std::size_t(id.stage) + 1];
}

// The number of elements from the first to the last one a strided view touches, or throws.
std::size_t extent(std::size_t count, std::size_t stride, std::size_t elem, const std::string& what) {
  if (count == 0) return 0;
  if (stride == 0) return 1;  // (one element, repeated: a broadcast vector, read in place)
  const std::size_t limit = std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / elem;
  if (count - 1 > (limit - 1) / stride)
    throw value_error(Arg::input, Message(what, ": count * stride overflows the address space"));
  return (count - 1) * stride + 1;
}

// Throws unless `a` (non-null) is the memory of a Buffer of ex's engine. `what` names it ("sum: the input").
void check_owned(const Executor& ex, const Allocation& a, Arg arg, const std::string& what) {
  if (!ex.owns(a))
    throw value_error(arg, Message(what, "'s Buffer belongs to another engine"),
                      Message("use Buffers of the engine that runs the call"));
}

// The bytes an operand covers, for overlap checks: absolute addresses (host memory, and one device's
// Buffers, so that two wraps of the same memory are seen to overlap), or offsets within a sharded Buffer.
struct Region {
  const void* space = nullptr;  // nullptr: addresses; else the sharded Allocation
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;
};
Region region(bool in_buffer, const Allocation* a, const void* host, std::size_t offset_elements, std::size_t elem,
              std::size_t extent_elements) {
  const std::size_t bytes = extent_elements * elem;
  if (!in_buffer || a == nullptr) return {nullptr, reinterpret_cast<std::uintptr_t>(host), bytes};
  if (a->sharded()) return {a, offset_elements * elem, bytes};
  return {nullptr, reinterpret_cast<std::uintptr_t>(a->data()) + offset_elements * elem, bytes};
}
bool overlaps(const Region& x, const Region& y) {
  return x.space == y.space && overlap(x.begin, x.bytes, y.begin, y.bytes);
}

// Checks a reduction's input.
void check_input(const Executor& ex, const ReduceInput& in, const std::string& name) {
  const std::size_t elem = size_of(in.dtype);
  if (!in.in_buffer) {
    extent(in.count, in.stride, elem, name);
    if (in.count > 0 && in.data == nullptr)
      throw value_error(Arg::input, Message(name, ": data is null but count is ", in.count));
    return;
  }
  if (in.count == 0) return;
  if (in.allocation == nullptr)
    throw value_error(Arg::input, Message(name, ": the BufferView has no buffer but count is ", in.count));
  check_owned(ex, *in.allocation, Arg::input, name + ": the input");
  const std::size_t ext = extent(in.count, in.stride, elem, name);
  if (in.offset > in.buffer_size || ext > in.buffer_size - in.offset)
    throw value_error(Arg::input, Message(name, ": the view (offset ", in.offset, ", count ", in.count, ", stride ",
                                          in.stride, ") reaches past the buffer of ", in.buffer_size, " elements"));
}

// A matrix (or batch) operand, checked: its extent in elements, from the first to the last.
// `repeat`: ld 0 repeats the first row (reductions; matmul operands need ld >= cols).
std::size_t checked_matrix(const Executor& ex, const MatrixInput& v, Arg arg, const std::string& what,
                           bool repeat = false) {
  if (v.count == 0 || v.outer_count == 0)
    throw value_error(arg, Message(what, ": the batch has count 0; a batch needs count >= 1 (and outer count >= 1)"));
  const std::size_t one = matrix_extent(v.rows, v.cols, v.ld, size_of(v.dtype), what, repeat);
  const std::size_t ext = batch_extent(batch_extent(one, v.count, v.stride, size_of(v.dtype), what), v.outer_count,
                                       v.outer_stride, size_of(v.dtype), what);
  if (!v.in_buffer) {
    if (ext > 0 && v.data == nullptr)
      throw value_error(arg, Message(what, ": data is null but it has ", v.rows, "x", v.cols, " elements"));
    return ext;
  }
  if (ext == 0) return 0;
  if (v.allocation == nullptr)
    throw value_error(arg, Message(what, " has no buffer but ", v.rows, "x", v.cols, " elements"));
  check_owned(ex, *v.allocation, arg, what);
  if (v.offset > v.buffer_size || ext > v.buffer_size - v.offset)
    throw value_error(arg, Message(what, " (offset ", v.offset, ", ", v.rows, "x", v.cols, ", ld ", v.ld,
                                   v.count > 1 ? Message(", count ", v.count, ", stride ", v.stride) : Message(),
                                   ") reaches past its buffer of ", v.buffer_size, " elements"));
  return ext;
}

// A number as %g writes it (alpha, beta).
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string shape(std::size_t rows, std::size_t cols, bool trans) {
  return std::to_string(rows) + "x" + std::to_string(cols) +
         (trans ? " (transposed: " + std::to_string(cols) + "x" + std::to_string(rows) + ")" : "");
}

}  // namespace

KernelId find_kernel(const std::vector<KernelInfo>& table, const std::string& name, const char* kind, Backend here) {
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].name == name) return i == 0 ? KernelId{} : KernelId{std::uint32_t(i - 1)};
  std::vector<std::string> names;
  for (const KernelInfo& k : table) names.push_back(k.name);
  // A kernel of another backend: say whose, so the caller knows which engine runs it. (Only backends built
  // into libtandem or whose module is loaded already: a mistyped name must not load the CUDA module.)
  const auto loaded = [](const char* module) {
    if (module == nullptr) return true;
    for (const ModuleStatus& m : module_status())
      if (m.name == module) return m.loaded;
    return false;
  };
  for (const BackendInfo& b : backends) {
    bool has_it = false;
    try {
      if (b.id != here && loaded(backend_entry(b.id).module)) {
        const auto theirs = std::string_view(kind) == "matmul" ? matmul_kernel_info(b.id) : reduce_kernel_info(b.id);
        has_it = std::ranges::any_of(theirs, [&](const KernelInfo& k) { return k.name == name; });
      }
    } catch (const Error&) {  // (that backend's tables cannot be read here: not compiled in, or no module)
    }
    if (has_it)
      throw value_error(Arg::kernel,
                        Message("'", name, "' is a ", kind, " kernel of the ", b.label, " backend, not of this ",
                                info(here).label, " engine, whose ", kind, " kernels are ", join(names)),
                        Message("make a ", b.label, " engine to run it (", Setting{Arg::backend, b.name}, ")"));
  }
  throw value_error(Arg::kernel, Message("unknown ", kind, " kernel '", name, "'; valid names are ", join(names)));
}

const void* first_element(const ReduceInput& in) {
  if (!in.in_buffer || in.count == 0 || in.allocation == nullptr) return in.data;
  return static_cast<const char*>(in.allocation->data()) + in.offset * size_of(in.dtype);
}

const void* first_element(const MatrixInput& in) {
  if (!in.in_buffer) return in.data;
  if (in.allocation == nullptr || in.rows == 0 || in.cols == 0) return nullptr;  // (an empty operand: not read)
  return static_cast<const char*>(in.allocation->data()) + in.offset * size_of(in.dtype);
}

// ---- reductions ----------------------------------------------------------------------------------

ReduceCall check_reduce_part(const Executor& ex, Op op, const ReduceInput& in, const ReduceOptions& opts) {
  const std::string name = to_string(op);
  check_input(ex, in, name);
  const auto& table = ex.first()->kernel_tables().reduce;
  const KernelId kernel = find_kernel(table, opts.kernel, "reduce", ex.first()->kind());
  check_kernel_accepts(kernel_info(table, kernel), in.dtype, &op, opts.deterministic, name);
  return {op, in, kernel, opts.deterministic};
}

ReduceCall check_reduce(const Executor& ex, Op op, const ReduceInput& in, const ReduceOptions& opts) {
  ReduceCall call = check_reduce_part(ex, op, in, opts);
  require_nonempty(op, in.count, to_string(op));
  return call;
}

ReduceCall check_reduce_into(const Executor& ex, Op op, const ReduceInput& in, const OutSlot& out,
                             const ReduceOptions& opts) {
  const std::string name = std::string(to_string(op)) + "_into";
  check_input(ex, in, name);
  if (out.allocation == nullptr)
    throw value_error(Arg::output, Message(name, ": the output Buffer is empty"),
                      Message("make it with Engine::buffer<R>(n) (n > index) or wrap()"));
  check_owned(ex, *out.allocation, Arg::output, name + ": the output");
  if (out.index >= out.size)
    throw value_error(Arg::output,
                      Message(name, ": index ", out.index, " is outside the output Buffer of ", out.size, " elements"));
  require_nonempty(op, in.count, name);
  const auto& table = ex.first()->kernel_tables().reduce;
  const KernelId kernel = find_kernel(table, opts.kernel, "reduce", ex.first()->kind());
  check_kernel_accepts(kernel_info(table, kernel), in.dtype, &op, opts.deterministic, name);
  return {op, in, kernel, opts.deterministic};
}

ReducePerCall check_reduce_per(const Executor& ex, Op op, Per per, const MatrixInput& in, const ReduceOutput& out,
                               const ReduceOptions& opts, bool empty_allowed) {
  const std::string name = std::string(to_string(op)) + " (per " + to_string(per) + ")";
  const std::size_t ext = checked_matrix(ex, in, Arg::input, name + ": the matrix", true);
  const std::size_t count = per == Per::row ? in.rows : in.cols, length = per == Per::row ? in.cols : in.rows;
  const char* each = per == Per::row ? "row" : "column";
  // A span holds exactly one result per row (column); a Buffer at least that many, from element 0.
  if (out.in_buffer ? out.size < count : out.size != count)
    throw value_error(Arg::output,
                      Message(name, ": the output has ", out.size, " elements but the matrix has ", count, " ", each,
                              count == 1 ? "" : "s"),
                      Message("pass one result per ", each, out.in_buffer ? " (a Buffer of at least that many)" : ""));
  if (count > 0) {
    if (out.in_buffer) {
      if (out.allocation == nullptr)
        throw value_error(Arg::output, Message(name, ": the output Buffer is empty"),
                          Message("make it with Engine::buffer<R>(", count, ")"));
      check_owned(ex, *out.allocation, Arg::output, name + ": the output");
    } else if (out.data == nullptr) {
      throw value_error(Arg::output, Message(name, ": the output span is null but has ", count, " elements"));
    }
    const Region o = region(out.in_buffer, out.allocation, out.data, 0, out.element_size, count);
    if (overlaps(o, region(in.in_buffer, in.allocation, in.data, in.offset, size_of(in.dtype), ext)))
      throw value_error(Arg::output, Message(name, ": the output overlaps the matrix"),
                        Message("the results must go to separate memory"));
  }
  const auto& table = ex.first()->kernel_tables().reduce;
  const KernelId kernel = find_kernel(table, opts.kernel, "reduce", ex.first()->kind());
  const KernelInfo& k = kernel_info(table, kernel);
  if (!k.per_row_col) {
    std::string names;
    for (const KernelInfo& each_kernel : table)
      if (each_kernel.per_row_col) names += std::string(names.empty() ? "" : ", ") + "'" + each_kernel.name + "'";
    throw value_error(Arg::kernel,
                      Message(name, ": kernel '", k.name, "' does not run per-row / per-column reductions"),
                      Message("use ", names, " (", Setting{Arg::kernel_info, "per_row_col"}, ")"));
  }
  check_kernel_accepts(k, in.dtype, &op, opts.deterministic, name);
  if (length == 0 && count > 0 && info(op).empty == EmptyRule::error && !empty_allowed)
    throw value_error(Arg::input,
                      Message(name, " of an empty ", each, " is undefined (the matrix is ", in.rows, "x", in.cols, ")"),
                      Message("check for an empty dimension first"));
  return {op, per, in, out, kernel, opts.deterministic};
}

// ---- matmul ---------------------------------------------------------------------------------------

MatmulCall check_matmul(const Executor& ex, const MatrixInput& a, const MatrixInput& b, const MatrixInput& c,
                        const MatmulOptions& opts) {
  const Dtype dtype = a.dtype;
  const std::size_t ea = checked_matrix(ex, a, Arg::a, "matmul: A"), eb = checked_matrix(ex, b, Arg::b, "matmul: B"),
                    ec = checked_matrix(ex, c, Arg::c, "matmul: C");
  const auto& table = ex.first()->kernel_tables().matmul;
  const KernelId kernel = find_kernel(table, opts.kernel, "matmul", ex.first()->kind());
  // One type, or two different ones among float, bfloat16 and half (a mixed product: C float).
  const bool mixed = b.dtype != dtype;
  if (mixed && !is_mixed_matmul(dtype, b.dtype))
    throw type_error(Arg::b, Message("matmul: ", Arg::a, " holds ", dtype, " but ", Arg::b, " holds ", b.dtype),
                     Message("give ", Arg::a, " and ", Arg::b, " one type, or two of float, bfloat16 and half"));
  check_kernel_accepts(kernel_info(table, kernel), dtype, nullptr, opts.deterministic, "matmul");
  if (mixed) check_kernel_accepts(kernel_info(table, kernel), b.dtype, nullptr, opts.deterministic, "matmul");
  // op(A) is m x k, op(B) is k x n.
  const std::size_t m = opts.trans_a ? a.cols : a.rows, k = opts.trans_a ? a.rows : a.cols;
  const std::size_t kb = opts.trans_b ? b.cols : b.rows, n = opts.trans_b ? b.rows : b.cols;
  if (k != kb || c.rows != m || c.cols != n)
    throw value_error(
        Arg::c,
        Message("matmul: shapes do not match: ", Arg::a, " is ", shape(a.rows, a.cols, opts.trans_a), ", ", Arg::b,
                " is ", shape(b.rows, b.cols, opts.trans_b), ", ", Arg::c, " is ", c.rows, "x", c.cols),
        Message("op(", Arg::a, ")'s columns must equal op(", Arg::b, ")'s rows, and ", Arg::c, " be op(", Arg::a,
                ")'s rows x op(", Arg::b, ")'s columns"));
  const MatrixInput* operands[] = {&a, &b};
  const Arg args[] = {Arg::a, Arg::b};
  for (int i = 0; i < 2; ++i) {
    if (operands[i]->count != c.count && operands[i]->stride != 0)
      throw value_error(
          args[i],
          Message("matmul: batch ", args[i], " has count ", operands[i]->count, " but ", Arg::c, " has ", c.count),
          Message("give it C's count, or stride 0 to use one ", args[i], " for every entry"));
    if (operands[i]->outer_count != c.outer_count && operands[i]->outer_stride != 0)
      throw value_error(args[i],
                        Message("matmul: batch ", args[i], " has outer count ", operands[i]->outer_count, " but ",
                                Arg::c, " has ", c.outer_count),
                        Message("give it C's outer count, or outer stride 0 to use one batch of ", args[i],
                                " for every outer entry"));
  }
  // C's elements apart (elements_apart, common/operands.hpp: columns, rows, the batch's two dimensions; no
  // overflow: the extents were checked).
  if (c.rows > 0 && c.cols > 0 &&
      !elements_apart(std::array<std::pair<std::size_t, std::size_t>, 4>{
          {{1, c.cols}, {c.ld, c.rows}, {c.stride, c.count}, {c.outer_stride, c.outer_count}}}))
    throw value_error(
        Arg::c,
        Message(
            "matmul: the entries of ", Arg::c, " overlap (", c.rows, "x", c.cols, ", ld ", c.ld, ", count ", c.count,
            ", stride ", c.stride,
            c.outer_count > 1 ? Message(", outer count ", c.outer_count, ", outer stride ", c.outer_stride) : Message(),
            ")"),
        Message("each entry of ", Arg::c, " needs its own memory"));
  if (!std::isfinite(opts.alpha) || !std::isfinite(opts.beta))
    throw value_error(
        std::isfinite(opts.alpha) ? Arg::beta : Arg::alpha,
        Message("matmul: ", Arg::alpha, " and ", Arg::beta, " must be finite numbers (got ",
                Setting{Arg::alpha, number(opts.alpha)}, ", ", Setting{Arg::beta, number(opts.beta)}, ")"));
  if (mixed && c.dtype != Dtype::f32)
    throw type_error(Arg::c, Message("matmul: ", Arg::c, " must hold float for ", dtype, " ", Arg::a, " and ", b.dtype,
                                     " ", Arg::b, ", not ", c.dtype));
  if (!mixed && c.dtype != info(dtype).compute)
    throw type_error(Arg::c, Message("matmul: ", Arg::c, " must hold ", info(dtype).compute, " for ", dtype, " ",
                                     Arg::a, " and ", Arg::b, ", not ", c.dtype));
  const Region rc = region(c.in_buffer, c.allocation, c.data, c.offset, size_of(c.dtype), ec);
  if (overlaps(rc, region(a.in_buffer, a.allocation, a.data, a.offset, size_of(a.dtype), ea)) ||
      overlaps(rc, region(b.in_buffer, b.allocation, b.data, b.offset, size_of(b.dtype), eb)))
    throw value_error(Arg::c, Message("matmul: ", Arg::c, " overlaps ", Arg::a, " or ", Arg::b),
                      Message("the output must be separate memory"));
  MatmulCall call{a, b, c, m, k, n, kernel};
  call.deterministic = opts.deterministic;
  call.trans_a = opts.trans_a, call.trans_b = opts.trans_b;
  call.alpha = opts.alpha, call.beta = opts.beta;
  call.precision = opts.precision;
  return call;
}

MatrixInput shifted(MatrixInput v, std::size_t elements) {
  if (v.in_buffer)
    v.offset += elements;
  else if (v.data != nullptr && elements > 0)
    v.data = static_cast<const char*>(v.data) + elements * size_of(v.dtype);
  return v;
}

namespace {
// One batch dimension of count entries `stride` apart (count 1: stride 0), no outer one.
MatrixInput one_dimension(MatrixInput v, std::size_t count, std::size_t stride) {
  v.count = count, v.stride = count > 1 ? stride : 0;
  v.outer_count = 1, v.outer_stride = 0;
  return v;
}
}  // namespace

std::vector<MatmulCall> batch_runs(const MatmulCall& call) {
  const std::size_t inner = call.c.count, outer = call.c.outer_count;
  MatrixInput MatmulCall::*const operands[] = {&MatmulCall::a, &MatmulCall::b, &MatmulCall::c};
  // Each operand's stride along each of C's dimensions (0: broadcast).
  auto stride_of = [](const MatrixInput& v, bool outer_dim) {
    return outer_dim ? (v.outer_count > 1 ? v.outer_stride : 0) : (v.count > 1 ? v.stride : 0);
  };
  MatmulCall one = call;
  if (outer == 1 || inner == 1) {  // one dimension: that one
    for (auto x : operands) (one.*x) = one_dimension(call.*x, inner * outer, stride_of(call.*x, inner == 1));
    return {one};
  }
  // Both: one run where every operand's outer stride is its inner run (or both are broadcasts).
  bool merges = true;
  for (auto x : operands) {
    const std::size_t s = stride_of(call.*x, false), so = stride_of(call.*x, true);
    merges = merges && so == s * inner;
  }
  if (merges) {
    for (auto x : operands) (one.*x) = one_dimension(call.*x, inner * outer, stride_of(call.*x, false));
    return {one};
  }
  // Else one product per entry of the shorter dimension, the longer one its batch.
  const bool loop_outer = outer <= inner;
  std::vector<MatmulCall> runs(loop_outer ? outer : inner, call);
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (auto x : operands)
      (runs[i].*x) = one_dimension(shifted(call.*x, i * stride_of(call.*x, loop_outer)), loop_outer ? inner : outer,
                                   stride_of(call.*x, !loop_outer));
  return runs;
}

GroupedCall check_matmul_grouped(const Executor& ex, const MatrixInput& a, const MatrixInput& b, const MatrixInput& c,
                                 std::span<const std::size_t> group_sizes, const MatmulOptions& opts) {
  const std::size_t groups = group_sizes.size(), m = opts.trans_a ? a.cols : a.rows;
  if (b.outer_count != 1)
    throw value_error(Arg::b, Message("matmul_grouped: ", Arg::b, " has an outer batch dimension"),
                      Message("give ", Arg::b, " one entry per group in one batch dimension"));
  const std::size_t eb = checked_matrix(ex, b, Arg::b, "matmul_grouped: B"),
                    ec = checked_matrix(ex, c, Arg::c, "matmul_grouped: C");
  std::size_t total = 0;
  for (std::size_t s : group_sizes) {
    if (s > m - std::min(total, m))
      throw value_error(Arg::a,
                        Message("matmul_grouped: the group sizes add up to more than op(", Arg::a, ")'s ", m, " rows"),
                        Message("give one size per group, adding up to op(", Arg::a, ")'s rows"));
    total += s;
  }
  if (total != m)
    throw value_error(
        Arg::a, Message("matmul_grouped: the group sizes add up to ", total, " but op(", Arg::a, ") has ", m, " rows"),
        Message("give one size per group, adding up to op(", Arg::a, ")'s rows"));
  if (b.count != groups && b.stride != 0)
    throw value_error(Arg::b, Message("matmul_grouped: ", Arg::b, " has ", b.count, " entries for ", groups, " groups"),
                      Message("give ", Arg::b, " one entry per group, or stride 0 for one matrix for every group"));
  if (overlaps(region(c.in_buffer, c.allocation, c.data, c.offset, size_of(c.dtype), ec),
               region(b.in_buffer, b.allocation, b.data, b.offset, size_of(b.dtype), eb)))
    throw value_error(Arg::c, Message("matmul_grouped: ", Arg::c, " overlaps an entry of ", Arg::b),
                      Message("the output must be separate memory"));
  // The whole call as one product with B's first entry: types, kernel, shapes, C apart from A.
  MatrixInput b0 = b;
  b0.count = 1, b0.stride = 0;
  GroupedCall grouped{check_matmul(ex, a, b0, c, opts), {}, {}};
  const MatmulCall& whole = grouped.whole;
  // Group g: op(A)'s rows r0 .. r1 - 1 (with trans_a, columns of the stored A), B's entry g, C's rows.
  auto part = [](const MatrixInput& v, std::size_t first, std::size_t rows, std::size_t cols) {
    MatrixInput x = one_dimension(shifted(v, first), 1, 0);
    x.rows = rows, x.cols = cols;
    return x;
  };
  std::size_t r0 = 0;
  for (std::size_t g = 0; g < groups; r0 += group_sizes[g], ++g) {
    const std::size_t rows = group_sizes[g];
    grouped.group_rows.push_back(std::int64_t(rows));
    if (rows == 0 || whole.n == 0) continue;  // (nothing to compute or write)
    MatmulCall one = whole;
    one.a = opts.trans_a ? part(a, r0, a.rows, rows) : part(a, r0 * a.ld, rows, a.cols);
    one.b = part(b, g * (b.count == 1 ? 0 : b.stride), b.rows, b.cols);
    one.c = part(c, r0 * c.ld, rows, c.cols);
    one.m = rows;
    grouped.groups.push_back(one);
  }
  // (the whole call with B's entries: one per group, or one for every group)
  grouped.whole.b.count = b.count == 1 || b.stride == 0 ? 1 : b.count;
  grouped.whole.b.stride = grouped.whole.b.count == 1 ? 0 : b.stride;
  return grouped;
}

// ---- topk and argsort -------------------------------------------------------------------------------

namespace {

// A host matrix input: data, and ld >= cols (a vector: one column, any stride).
void check_host_matrix(const MatrixInput& a, const char* call) {
  if (a.in_buffer)
    throw value_error(Arg::input, Message(call, " takes host memory"), Message("download the Buffer first"));
  if (a.rows * a.cols > 0 && a.data == nullptr)
    throw value_error(Arg::input, Message(call, ": the input is null but has ", a.rows * a.cols, " elements"),
                      Message("pass the data's address"));
  if (a.cols > 1 && a.ld < a.cols)
    throw value_error(Arg::input, Message(call, ": ld ", a.ld, " is less than the ", a.cols, " columns"),
                      Message("pass ld >= cols (the elements from one row to the next)"));
}

// An output of rows x cols (ld) elements, or of `size` elements from its start when rows and cols are 0.
void check_out(const char* call, const char* what, const void* data, std::size_t size, std::size_t rows,
               std::size_t cols, std::size_t ld, std::size_t want_rows, std::size_t want_cols) {
  const bool matrix = rows != 0 || cols != 0;
  if (matrix && (rows != want_rows || cols != want_cols))
    throw value_error(
        Arg::output,
        Message(call, ": ", what, " is ", rows, " x ", cols, " but the results are ", want_rows, " x ", want_cols),
        Message("pass a ", want_rows, " x ", want_cols, " matrix"));
  if (matrix && cols > 1 && ld < cols)
    throw value_error(Arg::output, Message(call, ": ", what, "'s ld ", ld, " is less than its ", cols, " columns"),
                      Message("pass ld >= cols"));
  if (!matrix && size < want_rows * want_cols)
    throw value_error(Arg::output,
                      Message(call, ": ", what, " has ", size, " elements for ", want_rows * want_cols, " results"),
                      Message("pass a span of ", want_rows * want_cols, " elements"));
  if (want_rows * want_cols > 0 && data == nullptr)
    throw value_error(Arg::output, Message(call, ": ", what, " is null"), Message("pass memory for the results"));
}

// The shape of topk's results (rows x k per row, k x cols per column), or throws unless 1 <= k <= a line's length.
std::pair<std::size_t, std::size_t> topk_results(Per per, const MatrixInput& a, std::size_t k) {
  const std::size_t lines = per == Per::row ? a.rows : a.cols, length = per == Per::row ? a.cols : a.rows;
  if (k == 0 || k > length)
    throw value_error(
        Arg::none,
        Message("topk: k = ", k, " for ", per == Per::row ? "rows" : "vectors or columns", " of ", length, " elements"),
        Message("pass 1 <= k <= ", length));
  return per == Per::row ? std::pair{lines, k} : std::pair{k, lines};
}

}  // namespace

void check_topk(Per per, const MatrixInput& a, std::size_t k, const void* values, std::size_t values_size,
                std::size_t values_rows, std::size_t values_cols, std::size_t values_ld, const void* indices,
                std::size_t indices_size, std::size_t indices_rows, std::size_t indices_cols, std::size_t indices_ld) {
  check_host_matrix(a, "topk");
  const auto [want_rows, want_cols] = topk_results(per, a, k);
  check_out("topk", "values", values, values_size, values_rows, values_cols, values_ld, want_rows, want_cols);
  check_out("topk", "indices", indices, indices_size, indices_rows, indices_cols, indices_ld, want_rows, want_cols);
}

namespace {

// The outputs of topk or argsort of Buffers (`op`): each of its element type and the results' shape, within its
// Buffer of ex's engine, apart from the input `in` and from the others.
void check_line_outputs(const Executor& ex, const char* op, const Region& in,
                        std::span<const std::pair<const MatrixInput*, const char*>> outs, std::span<const Dtype> types,
                        std::size_t want_rows, std::size_t want_cols, const char* shape_hint) {
  std::vector<Region> written;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const auto& [out, what] = outs[i];
    if (out->dtype != types[i])
      throw type_error(Arg::output, Message(op, ": ", what, " must hold ", types[i], ", not ", out->dtype));
    if (out->rows != want_rows || out->cols != want_cols)
      throw value_error(Arg::output,
                        Message(op, ": ", what, " is ", out->rows, " x ", out->cols, " but the results are ", want_rows,
                                " x ", want_cols),
                        Message("pass a ", want_rows, " x ", want_cols, " matrix", shape_hint));
    const std::size_t e = checked_matrix(ex, *out, Arg::output, std::string(op) + ": " + what);
    written.push_back(region(true, out->allocation, out->data, out->offset, size_of(out->dtype), e));
    if (overlaps(written.back(), in))
      throw value_error(Arg::output, Message(op, ": ", what, " overlaps the input"),
                        Message("the outputs must be separate memory"));
    for (std::size_t j = 0; j < i; ++j)
      if (overlaps(written[j], written[i]))
        throw value_error(Arg::output, Message(op, ": the ", outs[j].second, " overlap the ", what),
                          Message("the outputs must be separate memory"));
  }
}

}  // namespace

void check_topk_buffers(const Executor& ex, Per per, const MatrixInput& a, std::size_t k, const MatrixInput& values,
                        const MatrixInput& indices) {
  // (ld >= cols as for host memory; a vector's stride, its ld, may be 0)
  const std::size_t ea = checked_matrix(ex, a, Arg::input, "topk: the input", a.cols == 1);
  const auto [want_rows, want_cols] = topk_results(per, a, k);
  const std::pair<const MatrixInput*, const char*> outs[] = {{&values, "values"}, {&indices, "indices"}};
  const Dtype types[] = {a.dtype, Dtype::i64};
  check_line_outputs(ex, "topk", region(true, a.allocation, a.data, a.offset, size_of(a.dtype), ea), outs, types,
                     want_rows, want_cols, " (a vector's: k elements)");
}

void check_argsort_buffers(const Executor& ex, const MatrixInput& a, const MatrixInput& out) {
  const std::size_t ea = checked_matrix(ex, a, Arg::input, "argsort: the input");
  const std::pair<const MatrixInput*, const char*> outs[] = {{&out, "the output"}};
  const Dtype types[] = {Dtype::i64};
  check_line_outputs(ex, "argsort", region(true, a.allocation, a.data, a.offset, size_of(a.dtype), ea), outs, types,
                     a.rows, a.cols, " of int64, the input's shape");
}

void check_argsort(const MatrixInput& a, const void* out, std::size_t rows, std::size_t cols, std::size_t ld) {
  check_host_matrix(a, "argsort");
  check_out("argsort", "the output", out, 0, rows, cols, ld, a.rows, a.cols);
}

}  // namespace tandem::detail
