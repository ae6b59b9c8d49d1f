// tandem.Engine.matmul (python/module.cpp binds it) with np.matmul's conventions: 2-D operands, 1-D
// ones (a vector times a matrix, a matrix times a vector), batches of any number of leading dimensions
// that broadcast as NumPy's do, empty operands, out= in C or Fortran order; plus tandem's transposes,
// alpha / beta, kernel, deterministic mode and precision.
#include <algorithm>
#include <type_traits>

#include "common/dispatch.hpp"
#include "common/operands.hpp"
#include "python/engine.hpp"
#include "python/layout.hpp"

namespace tandem_python {

using tandem::Dtype;

namespace {

tandem::Precision parse_precision(const std::string& p) {
  if (p == "full") return tandem::Precision::full;
  if (p == "tf32") return tandem::Precision::tf32;
  if (p == "bf16") return tandem::Precision::bf16;
  throw tandem::value_error("tandem.matmul: precision must be 'full', 'tf32' or 'bf16' (got '" + p + "')");
}

// One operand (or out) as tandem sees it: rows x cols, rows ld apart; its batch strides, one per dimension of the
// batch shape (0: broadcast); and those as at most two batch dimensions (merged()): count matrices stride apart,
// outer_count runs of them outer_stride apart (BatchView::outer).
struct Operand {
  std::int64_t rows = 0, cols = 0, ld = 0;
  std::vector<std::int64_t> strides;
  std::int64_t count = 1, stride = 0, outer_count = 1, outer_stride = 0;
};

// NumPy's broadcast of two batch shapes.
std::vector<std::int64_t> broadcast(std::vector<std::int64_t> x, std::vector<std::int64_t> y, const Array& a,
                                    const Array& b) {
  while (x.size() < y.size()) x.insert(x.begin(), 1);
  while (y.size() < x.size()) y.insert(y.begin(), 1);
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (x[d] != y[d] && x[d] != 1 && y[d] != 1)
      throw tandem::value_error("tandem.matmul: the batch dimensions of a " + shape_text(a.shape) + " and b " +
                                shape_text(b.shape) + " do not broadcast (NumPy's rule: equal, or 1)");
    x[d] = x[d] == 1 ? y[d] : x[d];
  }
  return x;
}

// x (2 or more dimensions) as an Operand `op` over the batch shape `batch`: read in place when its batch strides
// are not negative and its rows or columns have unit stride (columns: read as the transpose, `trans` flipped);
// else, with may_copy, copied (C order, its own shape) by its library, or false.
bool operand(Array& x, const std::vector<std::int64_t>& batch, bool& trans, std::uintptr_t stream, Operand& result,
             bool may_copy = true) {
  for (int attempt = 0;; ++attempt) {
    const std::size_t r = x.shape.size() - 2, skip = batch.size() - r;  // (x's batch dimensions are the last r)
    Operand op;
    bool ok = true;
    op.strides.assign(batch.size(), 0);
    for (std::size_t d = 0; d < r; ++d)
      if (x.shape[d] != 1) op.strides[skip + d] = x.strides[d], ok = ok && x.strides[d] >= 0;
    std::int64_t rows = x.shape[r], cols = x.shape[r + 1], s0 = x.strides[r], s1 = x.strides[r + 1];
    bool flip = false;
    if (!(s1 == 1 || cols <= 1) && (s0 == 1 || rows <= 1)) std::swap(rows, cols), std::swap(s0, s1), flip = true;
    op.rows = rows, op.cols = cols, op.ld = rows > 1 ? s0 : std::max<std::int64_t>(cols, 1);
    ok = ok && (s1 == 1 || cols <= 1) && op.ld >= cols;
    if (ok) {
      if (flip) trans = !trans;
      result = op;
      return true;
    }
    if (!may_copy) return false;
    if (attempt > 0) throw tandem::value_error("tandem.matmul: internal layout error (please report it)");
    const std::vector<std::int64_t> shape = x.shape;
    x = x.device ? contiguous_device_copy(x, stream) : contiguous_copy(x);
    // (A vector's copy is 1-D: the dimension matmul gave it comes back, in C order.)
    x.shape = shape, x.strides.assign(shape.size(), 1);
    for (std::size_t d = shape.size() - 1; d > 0; --d) x.strides[d - 1] = x.strides[d] * shape[d];
  }
}

// The batch shape as at most two dimensions for every operand at once: neighbouring dimensions merge where each
// operand's outer stride is its inner run (broadcasts: 0 and 0), dimensions of length 1 drop out. False where
// more than two remain (the operands are left as they were).
bool merged(const std::vector<std::int64_t>& batch, std::initializer_list<Operand*> ops) {
  std::vector<std::int64_t> counts;  // (innermost first)
  std::vector<std::vector<std::int64_t>> strides(ops.size());
  for (std::size_t d = batch.size(); d-- > 0;) {
    if (batch[d] == 1) continue;
    bool joins = !counts.empty();
    std::size_t i = 0;
    for (const Operand* op : ops) joins = joins && op->strides[d] == strides[i++].back() * counts.back();
    if (joins) {
      counts.back() *= batch[d];
      continue;
    }
    counts.push_back(batch[d]);
    i = 0;
    for (const Operand* op : ops) strides[i++].push_back(op->strides[d]);
  }
  if (counts.size() > 2) return false;
  std::size_t i = 0;
  for (Operand* op : ops) {
    op->count = counts.size() > 0 ? counts[0] : 1, op->stride = counts.size() > 0 ? strides[i][0] : 0;
    op->outer_count = counts.size() > 1 ? counts[1] : 1, op->outer_stride = counts.size() > 1 ? strides[i][1] : 0;
    ++i;
  }
  return true;
}

// Whether out's elements are apart (the engine's rule, tandem::detail::elements_apart).
bool apart(const Operand& c) {
  return tandem::detail::elements_apart(std::array<std::pair<std::int64_t, std::int64_t>, 4>{
      {{1, c.cols}, {c.ld, c.rows}, {c.stride, c.count}, {c.outer_stride, c.outer_count}}});
}

// a and b of one call: both host arrays or both of one GPU, library and stream; matmul's types; NumPy's
// promotion: two of float32, bfloat16 and float16 stay as they are (one mixed product: the 16-bit operand is
// converted as it is read, Engine::matmul), float64 with anything is float64, any other pair float32, the
// operands converted first.
void matching_operands(const std::string& call, Input& ia, Input& ib) {
  Array &a = ia.a, &b = ib.a;
  if (a.device != b.device) throw tandem::value_error(call + ": a and b must both be host arrays or both GPU arrays");
  if (a.device && a.device_id != b.device_id)
    throw tandem::value_error(call + ": a is on GPU " + std::to_string(a.device_id) + " and b on GPU " +
                              std::to_string(b.device_id) + "; move them to one GPU (the product runs there)");
  if (a.device && (a.lib != b.lib || ia.stream != ib.stream))
    throw tandem::value_error(call + ": a and b are GPU arrays of different libraries or streams; use one");
  for (const Array* x : {&a, &b})
    if (!tandem::info(x->dtype).matmul)
      throw tandem::type_error(call + " takes " + dtype_names(true) + ", not " + tandem::info(x->dtype).array_name);
  if (a.dtype != b.dtype && !tandem::detail::is_mixed_matmul(a.dtype, b.dtype)) {
    const Dtype to = a.dtype == Dtype::f64 || b.dtype == Dtype::f64 ? Dtype::f64 : Dtype::f32;
    if (a.dtype != to) a = converted(a, to, ia.stream);
    if (b.dtype != to) b = converted(b, to, ib.stream);
  }
}

// f(std::type_identity<TA>{}, std::type_identity<TB>{}) for A and B of types a and b: one type of matmul's, or a
// mixed pair of float, bfloat16 and half (matching_operands leaves no other).
template <class F>
void visit_pair(Dtype a, Dtype b, F&& f) {
  if (a == b)
    return tandem::detail::visit(
        a, [&]<class T>(std::type_identity<T> t) { f(t, t); }, tandem::detail::matmul_types{});
  using Floating = tandem::type_list<float, tandem::bfloat16, tandem::half>;
  tandem::detail::visit(
      a,
      [&]<class TA>(std::type_identity<TA> ta) {
        tandem::detail::visit(
            b,
            [&]<class TB>(std::type_identity<TB> tb) {
              if constexpr (tandem::is_mixed_matmul_v<TA, TB>) f(ta, tb);
            },
            Floating{});
      },
      Floating{});
}

}  // namespace

py::object PyEngine::matmul(const py::object& ao, const py::object& bo, const MatmulArgs& m) const {
  Input ia = input(ao), ib = input(bo);
  matching_operands("tandem.matmul", ia, ib);
  Array &a = ia.a, &b = ib.a;
  if (a.ndim() == 0 || b.ndim() == 0)
    throw tandem::value_error("tandem.matmul: a and b must have 1 or more dimensions (a scalar is not a matrix)");
  bool trans_a = m.trans_a, trans_b = m.trans_b;
  // 1-D operands (np.matmul): a vector a is one row, b one column; that dimension leaves the result.
  const bool vec_a = a.ndim() == 1, vec_b = b.ndim() == 1;
  if ((vec_a && trans_a) || (vec_b && trans_b))
    throw tandem::value_error("tandem.matmul: trans_a / trans_b transpose matrices; a 1-D operand has none");
  if (vec_a) a.shape.insert(a.shape.begin(), 1), a.strides.insert(a.strides.begin(), 0);
  if (vec_b) b.shape.push_back(1), b.strides.push_back(1);
  const std::vector<std::int64_t> batch =
      broadcast({a.shape.begin(), a.shape.end() - 2}, {b.shape.begin(), b.shape.end() - 2}, a, b);
  const std::size_t ra = a.shape.size() - 2, rb = b.shape.size() - 2;
  const std::int64_t mm = trans_a ? a.shape[ra + 1] : a.shape[ra], ka = trans_a ? a.shape[ra] : a.shape[ra + 1];
  const std::int64_t kb = trans_b ? b.shape[rb + 1] : b.shape[rb], nn = trans_b ? b.shape[rb] : b.shape[rb + 1];
  if (ka != kb) {
    auto given = [](const Array& x, bool vec, bool front) {
      std::vector<std::int64_t> s = x.shape;
      if (vec) s.erase(front ? s.begin() + std::ptrdiff_t(s.size() - 2) : s.end() - 1);
      return shape_text(s);
    };
    throw tandem::value_error("tandem.matmul: a " + given(a, vec_a, true) + (trans_a ? " (transposed)" : "") +
                              " and b " + given(b, vec_b, false) + (trans_b ? " (transposed)" : "") +
                              " do not fit: a's columns (" + std::to_string(ka) + ") must equal b's rows (" +
                              std::to_string(kb) + ")");
  }
  std::vector<std::int64_t> shape = batch;  // the result's, before the vectors' dimensions leave it
  shape.push_back(mm), shape.push_back(nn);
  std::vector<std::int64_t> given_shape = shape;
  if (vec_b) given_shape.pop_back();
  if (vec_a) given_shape.erase(given_shape.end() - (vec_b ? 1 : 2));
  const Dtype cd = a.dtype == b.dtype ? tandem::info(a.dtype).compute : Dtype::f32;
  Array c;
  bool via_copy = false;  // out= that cannot be written in place: computed into a new array, then copied
  if (m.out.is_none()) {
    if (m.beta != 0) throw tandem::value_error("tandem.matmul: beta != 0 reads out; pass it as out=");
    c = new_array_like(a, shape, cd);
  } else {
    c = output(m.out, ia);
    if (c.shape != given_shape)
      throw tandem::value_error("tandem.matmul: out= has shape " + shape_text(c.shape) + " but the result has shape " +
                                shape_text(given_shape));
    if (c.dtype != cd)
      throw tandem::type_error(std::string("tandem.matmul: out= must hold ") + tandem::info(cd).array_name + " for " +
                               tandem::info(a.dtype).array_name +
                               (a.dtype == b.dtype ? "" : std::string(" and ") + tandem::info(b.dtype).array_name) +
                               " inputs, not " + tandem::info(c.dtype).array_name);
    c.shape = shape, c.strides.resize(c.shape.size() - (vec_a ? 1 : 0) - (vec_b ? 1 : 0));
    if (vec_b) c.strides.push_back(1);
    if (vec_a) c.strides.insert(c.strides.end() - 1, 0);
    via_copy = c.data == nullptr;
  }
  std::int64_t count = 1;
  for (std::int64_t n : batch) count *= n;
  auto result = [&] {  // out=, or the new array without the vectors' dimensions (a NumPy scalar for two vectors)
    if (!m.out.is_none()) return m.out;
    py::object r = given_shape == shape ? c.keep : c.keep.attr("reshape")(to_tuple(given_shape));
    return given_shape.empty() && !a.device ? r.attr("__getitem__")(py::tuple()) : r;
  };
  if (count == 0 || mm == 0 || nn == 0) return result();
  if (ka == 0) {  // a sum of no products: 0 (beta * out)
    library_copy(c.keep, m.beta == 0 || m.out.is_none() ? py::object(py::int_(0)) : c.keep * py::float_(m.beta), c.lib);
    return result();
  }
  Operand A, B, C;
  operand(a, batch, trans_a, ia.stream, A);
  operand(b, batch, trans_b, ib.stream, B);
  // out in Fortran order (columns of unit stride): its transpose is row-major, and out^T = op(b)^T op(a)^T.
  bool swapped = false;
  auto new_out = [&] {
    via_copy = true, swapped = false;
    c = new_array_like(a, shape, cd);
    if (m.beta != 0) library_copy(c.keep, m.out.attr("reshape")(to_tuple(shape)), a.lib);
    operand(c, batch, swapped, ia.stream, C);
  };
  if (via_copy || !operand(c, batch, swapped, ia.stream, C, false)) new_out();
  // The batch as at most two dimensions, read in place; else (three or more that do not merge) a and b
  // repeated to the batch shape (one run each; one matrix for every entry stays as it is) and out, where it is
  // not one run, computed apart.
  if (!merged(batch, {&A, &B, &C})) {
    std::vector<std::int64_t> full = batch;
    full.push_back(0), full.push_back(0);
    for (auto [x, op, t, given, stream] :
         {std::tuple{&a, &A, &trans_a, m.trans_a, ia.stream}, std::tuple{&b, &B, &trans_b, m.trans_b, ib.stream}}) {
      if (std::ranges::all_of(op->strides, [](std::int64_t v) { return v == 0; })) continue;  // (one matrix)
      full[full.size() - 2] = x->shape[x->shape.size() - 2], full.back() = x->shape.back();
      *x = broadcast_copy(*x, full, stream);
      *t = given;  // (the copy is in C order: read as it is)
      operand(*x, batch, *t, stream, *op);
    }
    if (!merged(batch, {&A, &B, &C})) new_out();
    merged(batch, {&A, &B, &C});
  }
  if (!apart(C)) {  // (out= whose entries share elements)
    new_out();
    merged(batch, {&A, &B, &C});
  }
  bool ta = trans_a, tb = trans_b;
  if (swapped) std::swap(A, B), ta = !trans_b, tb = !trans_a;
  const Array& ax = swapped ? b : a;
  const Array& bx = swapped ? a : b;
  tandem::MatmulOptions o{m.kernel, m.deterministic, ta, tb, m.alpha, m.beta, parse_precision(m.precision)};
  const tandem::Engine& eng = *ia.eng;
  // A product of TA and TB inputs (one type, or a mixed pair: C float).
  auto product = [&]<class TA, class TB>(std::type_identity<TA>, std::type_identity<TB>) {
    using CT = std::conditional_t<std::is_same_v<TA, TB>, tandem::compute_t<TA>, float>;
    auto sz = [](std::int64_t v) { return std::size_t(v); };
    if (!ax.device) {
      auto view = [&]<class T>(const void* data, const Operand& x, std::type_identity<T>) {
        return tandem::BatchView<T>{
            static_cast<T*>(const_cast<void*>(data)), sz(x.rows), sz(x.cols), sz(x.ld), sz(x.count), sz(x.stride)}
            .outer(sz(x.outer_count), sz(x.outer_stride));
      };
      const tandem::BatchView<const TA> va = view(ax.data, A, std::type_identity<const TA>{});
      const tandem::BatchView<const TB> vb = view(bx.data, B, std::type_identity<const TB>{});
      const tandem::BatchView<CT> vc = view(c.data, C, std::type_identity<CT>{});
      py::gil_scoped_release unlocked;
      eng.matmul(va, vb, vc, o);
      return;
    }
    const auto ab = eng.wrap(static_cast<TA*>(ax.data), sz(ax.extent()));
    const auto bb = eng.wrap(static_cast<TB*>(bx.data), sz(bx.extent()));
    const auto cb = eng.wrap(static_cast<CT*>(c.data), sz(c.extent()));
    auto batch_of = [&](const auto& buffer, const Operand& x) {
      return buffer.batch(sz(x.rows), sz(x.cols), sz(x.count), sz(x.stride), sz(x.ld))
          .outer(sz(x.outer_count), sz(x.outer_stride));
    };
    py::gil_scoped_release unlocked;
    eng.matmul(batch_of(ab, A), batch_of(bb, B), batch_of(cb, C), o);
  };
  visit_pair(ax.dtype, bx.dtype, product);
  if (via_copy)
    library_copy(m.out, given_shape == shape ? c.keep : c.keep.attr("reshape")(to_tuple(given_shape)), a.lib);
  if (ia.wait) eng.synchronize();
  return result();
}

py::object PyEngine::matmul_grouped(const py::object& ao, const py::object& bo, const py::object& sizes_o,
                                    const MatmulArgs& m) const {
  const std::string call = "tandem.matmul_grouped";
  Input ia = input(ao), ib = input(bo);
  matching_operands(call, ia, ib);
  Array &a = ia.a, &b = ib.a;
  if (a.ndim() != 2 || (b.ndim() != 2 && b.ndim() != 3))
    throw tandem::value_error(call +
                              ": a must be 2-D (rows x k) and b 3-D (one k x n matrix per group) or 2-D (one "
                              "for every group); got a " +
                              shape_text(a.shape) + " and b " + shape_text(b.shape));
  // group_sizes: a sequence of integers >= 0 (Python ints or NumPy integers, not bools).
  std::vector<std::size_t> sizes;
  for (const py::handle h : py::iter(sizes_o)) {
    if (py::isinstance<py::bool_>(h) || !py::hasattr(h, "__index__"))
      throw tandem::type_error(call + ": group_sizes must be a sequence of integers");
    const py::int_ v(py::reinterpret_borrow<py::object>(h).attr("__index__")());
    if (v < py::int_(0) || v >= py::int_(std::int64_t(1) << 62))
      throw tandem::value_error(call + ": group size " + py::repr(v).cast<std::string>() + " is out of range");
    sizes.push_back(v.cast<std::size_t>());
  }
  if (b.ndim() == 3 && std::size_t(b.shape[0]) != sizes.size())
    throw tandem::value_error(call + ": b has " + std::to_string(b.shape[0]) + " matrices for " +
                              std::to_string(sizes.size()) +
                              " groups; give b one matrix per group (3-D), or a 2-D b for one matrix shared by every "
                              "group");
  const std::int64_t rows = m.trans_a ? a.shape[1] : a.shape[0];
  const std::size_t rb = b.ndim() - 2;
  const std::int64_t n = m.trans_b ? b.shape[rb] : b.shape[rb + 1];
  const Dtype cd = a.dtype == b.dtype ? tandem::info(a.dtype).compute : Dtype::f32;
  Array c;
  bool via_copy = false;  // out= that cannot be written in place as row-major: computed apart, then copied
  if (m.out.is_none()) {
    if (m.beta != 0) throw tandem::value_error(call + ": beta != 0 reads out; pass it as out=");
    c = new_array_like(a, {rows, n}, cd);
  } else {
    c = output(m.out, ia);
    if (c.shape != std::vector<std::int64_t>{rows, n})
      throw tandem::value_error(call + ": out= has shape " + shape_text(c.shape) + " but the result has shape " +
                                shape_text({rows, n}));
    if (c.dtype != cd)
      throw tandem::type_error(call + ": out= must hold " + tandem::info(cd).array_name + ", not " +
                               tandem::info(c.dtype).array_name);
    via_copy = c.data == nullptr;
  }
  bool ta = m.trans_a, tb = m.trans_b, tc = false;
  Operand A, B, C;
  const std::vector<std::int64_t> groups =
      b.ndim() == 3 ? std::vector<std::int64_t>{b.shape[0]} : std::vector<std::int64_t>{};
  operand(a, {}, ta, ia.stream, A);
  operand(b, groups, tb, ib.stream, B);
  merged(groups, {&B});
  if (via_copy || !operand(c, {}, tc, ia.stream, C, false) || tc) {
    via_copy = true, tc = false;
    c = new_array_like(a, {rows, n}, cd);
    if (m.beta != 0) library_copy(c.keep, m.out, a.lib);
    operand(c, {}, tc, ia.stream, C);
  }
  tandem::MatmulOptions o{m.kernel, m.deterministic, ta, tb, m.alpha, m.beta, parse_precision(m.precision)};
  const tandem::Engine& eng = *ia.eng;
  auto sz = [](std::int64_t v) { return std::size_t(v); };
  visit_pair(a.dtype, b.dtype, [&]<class TA, class TB>(std::type_identity<TA>, std::type_identity<TB>) {
    using CT = tandem::matmul_result_t<TA, TB>;
    if (!a.device) {
      py::gil_scoped_release unlocked;
      eng.matmul_grouped(tandem::MatrixView<const TA>{static_cast<const TA*>(a.data), sz(A.rows), sz(A.cols), sz(A.ld)},
                         tandem::BatchView<const TB>{static_cast<const TB*>(b.data), sz(B.rows), sz(B.cols), sz(B.ld),
                                                     sz(B.count), sz(B.stride)},
                         tandem::MatrixView<CT>{static_cast<CT*>(c.data), sz(C.rows), sz(C.cols), sz(C.ld)}, sizes, o);
      return;
    }
    const auto ab = eng.wrap(static_cast<TA*>(a.data), sz(a.extent()));
    const auto bb = eng.wrap(static_cast<TB*>(b.data), sz(b.extent()));
    const auto cb = eng.wrap(static_cast<CT*>(c.data), sz(c.extent()));
    py::gil_scoped_release unlocked;
    eng.matmul_grouped(ab.matrix(sz(A.rows), sz(A.cols), sz(A.ld)),
                       bb.batch(sz(B.rows), sz(B.cols), sz(B.count), sz(B.stride), sz(B.ld)),
                       cb.matrix(sz(C.rows), sz(C.cols), sz(C.ld)), sizes, o);
  });
  if (via_copy && !m.out.is_none()) library_copy(m.out, c.keep, a.lib);
  if (ia.wait) eng.synchronize();
  return m.out.is_none() ? c.keep : m.out;
}

}  // namespace tandem_python
