// Full reductions (axis=None) of the Python module's arrays (python/full_reduce.hpp): of one strided run, and
// of a broadcast without a copy of it.
#include "python/full_reduce.hpp"

#include <cmath>
#include <cstdint>

#include "common/canonical.hpp"
#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"
#include "python/layout.hpp"

namespace tandem_python {

using tandem::Dtype;
using tandem::Op;
using tandem::Per;

namespace {

// The mean of the integers of a broadcast as the engine gives it over every element: their exact sum, rounded
// to float64 once (ExactSum::to_double), divided by the count `n`. The exact sum is the distinct elements'
// exact sum times the repeats; the distinct elements' sum modulo 2^64 (`wrapped`) gives its low 64 bits, and
// their mean (within 2^-51 of the exact sum over their count, far closer than the 2^63 that a wrong high
// part would be off) the high part.
double repeated_integer_mean(std::int64_t wrapped, double mean, std::int64_t distinct, std::int64_t repeats,
                             std::int64_t n) {
  using Wide = __int128;
  const auto low = std::uint64_t(wrapped);
  const long double estimate = static_cast<long double>(mean) * static_cast<long double>(distinct);
  const auto high = Wide(std::llroundl((estimate - static_cast<long double>(low)) * 0x1p-64L));
  const Wide total = (high * (Wide(1) << 64) + Wide(low)) * Wide(repeats);  // |total| < n * 2^64 <= 2^127
  const tandem::detail::ExactSum exact{std::uint64_t(total), std::uint64_t((unsigned __int128)total >> 64)};
  return exact.to_double() / double(n);
}

// x^e modulo 2^64 (the product of e repeats of x, as the engine's integer products wrap).
std::uint64_t wrapped_power(std::uint64_t x, std::uint64_t e) {
  std::uint64_t r = 1;
  for (; e != 0; e >>= 1, x *= x)
    if (e & 1) r *= x;
  return r;
}

// x's bits as type d (of x's element size): an unsigned integer as int64, whose products PyTorch has.
py::object library_view(const py::object& x, Lib lib, Dtype d) {
  if (lib == Lib::torch) return x.attr("view")(py::module_::import("torch").attr(tandem::info(d).array_name));
  return x.attr("view")(numpy_dtype(d));
}

// While alive, NumPy's overflow warnings are off (np.errstate(over='ignore'), left as it was however the scope
// ends); nothing for the other libraries, which give none.
struct OverflowQuiet {
  py::object state;
  explicit OverflowQuiet(Lib lib) {
    if (lib != Lib::numpy) return;
    state = py::module_::import("numpy").attr("errstate")(py::arg("over") = "ignore");
    state.attr("__enter__")();
  }
  ~OverflowQuiet() {
    if (state) state.attr("__exit__")(py::none(), py::none(), py::none());
  }
  OverflowQuiet(const OverflowQuiet&) = delete;
  OverflowQuiet& operator=(const OverflowQuiet&) = delete;
};

// A 0-d array of a's library and of type d holding the bits of the NumPy scalar s (of type d): written as
// an integer of their size, which no library converts (a GPU's conversions give NaN other bits).
py::object device_scalar(const Array& a, Dtype d, const py::object& s) {
  const Dtype bits = tandem::size_of(d) == 2 ? Dtype::i16 : tandem::size_of(d) == 4 ? Dtype::i32 : Dtype::i64;
  const Array v = new_array_like(a, {}, d);
  const py::object pattern = py::module_::import("numpy").attr("asarray")(s).attr("view")(numpy_dtype(bits));
  library_copy(library_view(v.keep, a.lib, bits), pattern.attr("item")(), a.lib);
  return v.keep;
}

// Copies elements begin .. begin + count - 1 (C order) of a.keep[index] (device array `a` with its first d
// axes fixed by `index`) into dst[at:at + count], by the library's copies of boxes of `a`: a partial first
// block of axis d, the whole blocks, a partial last block (at most 2 ndim - 1 boxes in all).
void copy_device_elements(const Array& a, py::list& index, std::size_t d, std::int64_t begin, std::int64_t count,
                          const py::object& dst, std::int64_t at) {
  std::int64_t inner = 1;  // the elements of one block (one index of axis d)
  for (std::size_t e = d + 1; e < a.shape.size(); ++e) inner *= a.shape[e];
  auto within = [&](std::int64_t n) {  // the next n elements, all in one block: that block's axes
    index.append(begin / inner);
    copy_device_elements(a, index, d + 1, begin % inner, n, dst, at);
    index.attr("pop")();
    begin += n, count -= n, at += n;
  };
  if (count > 0 && (begin % inner != 0 || count < inner)) within(std::min(count, inner - begin % inner));
  if (const std::int64_t whole = count / inner; whole > 0) {
    index.append(py::slice(py::int_(begin / inner), py::int_(begin / inner + whole), py::none()));
    const py::object box = a.keep[py::tuple(index)];
    index.attr("pop")();
    const py::object to = dst[py::slice(py::int_(at), py::int_(at + whole * inner), py::none())];
    library_copy(to.attr("reshape")(box.attr("shape")), box, a.lib);
    begin += whole * inner, count -= whole * inner, at += whole * inner;
  }
  if (count > 0) within(count);
}

}  // namespace

// The reduction of a host array whose elements are one run `stride` apart (0: a broadcast of one element,
// read as often as it repeats): an integer result into `integer` (and `real`), a floating one into `real`.
void host_reduce(Op op, const Array& a, std::int64_t stride, const tandem::ReduceOptions& o, const tandem::Engine& eng,
                 double& real, std::int64_t& integer) {
  tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    const auto n = std::size_t(a.size());
    const tandem::StridedView<T> v{static_cast<const T*>(a.data), n, std::size_t(n <= 1 ? 1 : stride)};
    py::gil_scoped_release unlocked;
    tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      const auto value = eng.reduce<O>(v, o);
      if constexpr (std::is_integral_v<decltype(value)>)
        integer = std::int64_t(value), real = double(value);
      else
        real = double(value);
    });
  });
}

// Whether a full reduction of a broadcast may read each distinct element once (reduce_distinct): where a
// repeat changes nothing (min, max, argmin, argmax), only multiplies the result (integer sums and sums of
// squares, modulo 2^64), only raises it to a power (integer products, modulo 2^64) or leaves it as it is (an
// integer mean, from the exact sum: repeated_integer_mean): the same bits as every element read, in either
// mode. Float sums, sums of squares, means and products only outside deterministic mode, whose bits follow
// every element, repeats included (reduce_in_pieces).
bool repeats_in_place(Op op, Dtype input, bool deterministic) {
  switch (op) {
    case Op::min:
    case Op::max:
    case Op::argmin:
    case Op::argmax:
      return true;
    case Op::sum:
    case Op::sumsq:
    case Op::mean:
    case Op::prod:
      return !is_float(input) || !deterministic;
    default:
      return false;
  }
}

// The full reduction of a host broadcast that is not one run (np.broadcast_to(row, (n, 5))) from its
// distinct elements (distinct_elements: a view without the stride-0 dimensions, never the broadcast's size),
// where repeats_in_place allows: an index mapped to the first repeat of its element, a sum multiplied, a
// product raised to the repeats' power, an integer mean from the exact sum.
void reduce_distinct(Op op, const Array& a, const tandem::ReduceOptions& o, const tandem::Engine& eng, double& real,
                     std::int64_t& integer) {
  Array distinct = distinct_elements(a);
  std::int64_t stride = 1;
  if (!distinct.one_run(stride)) distinct = contiguous_copy(distinct), stride = 1;
  host_reduce(op, distinct, stride, o, eng, real, integer);
  const std::int64_t repeats = a.size() / distinct.size();
  const bool float_result = is_float(tandem::result_dtype(op, a.dtype));
  if (tandem::is_arg(op)) {  // distinct element `integer` (C order), at its first repeat in a
    std::int64_t k = integer, index = 0, below = 1;
    for (int d = a.ndim() - 1; d >= 0; --d) {
      const auto u = std::size_t(d);
      if (a.shape[u] == 1 || a.strides[u] != 0) index += k % a.shape[u] * below, k /= a.shape[u];
      below *= a.shape[u];
    }
    integer = index, real = double(index);
  } else if (op == Op::sum || op == Op::sumsq) {
    if (float_result)
      real *= double(repeats);
    else  // (modulo 2^64, as the sum of every repeat)
      integer = std::int64_t(std::uint64_t(integer) * std::uint64_t(repeats)), real = double(integer);
  } else if (op == Op::prod) {
    if (float_result)  // (outside deterministic mode: any order of the products)
      real = std::pow(real, double(repeats));
    else
      integer = std::int64_t(wrapped_power(std::uint64_t(integer), std::uint64_t(repeats))), real = double(integer);
  } else if (op == Op::mean && !is_float(a.dtype)) {
    double unused = 0;
    std::int64_t wrapped = 0;
    host_reduce(Op::sum, distinct, stride, o, eng, unused, wrapped);
    real = repeated_integer_mean(wrapped, real, distinct.size(), repeats, a.size());
  }
}

// Whether op's deterministic result over the elements of dtype `input` follows the canonical order of
// common/canonical.hpp, which reduce_in_pieces computes a piece at a time: the float sums, sums of squares,
// means and products.
bool canonical_in_pieces(Op op, Dtype input, bool deterministic) {
  return deterministic && is_float(input) && (op == Op::sum || op == Op::sumsq || op == Op::mean || op == Op::prod);
}

// The deterministic sum, sum of squares, mean or product of a host broadcast that is not one run
// (np.broadcast_to(row, (n, 5))), where canonical_in_pieces allows, copied a piece at a time (never the
// broadcast's size at once), with the bits of the same elements in one array. The canonical order's chunk
// values (steps 1-3: each run of kChunk elements on its own) are the deterministic per-row results of the
// pieces taken as rows of kChunk elements (the last chunk on its own); step 4 is the deterministic sum (a
// product's: product) of the chunk values in order. A mean divides the sum as the engine does (mean_value).
void reduce_in_pieces(Op op, const Array& a, const tandem::ReduceOptions& o, const tandem::Engine& eng, double& real) {
  namespace canonical = tandem::detail::canonical;
  tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (tandem::is_floating_v<T>) {
      using C = tandem::compute_t<T>;
      constexpr std::int64_t kChunk = canonical::kChunk, kPieceChunks = 256;  // 2^20 elements a piece
      const std::int64_t n = a.size(), chunks = (n + kChunk - 1) / kChunk;
      const Op per_chunk = op == Op::mean ? Op::sum : op, of_values = op == Op::prod ? Op::prod : Op::sum;
      std::vector<C> values(std::size_t(chunks), C(0));
      std::vector<T> piece(std::size_t(std::min(n, kChunk * kPieceChunks)));
      py::gil_scoped_release unlocked;
      for (std::int64_t c = 0; c < chunks; c += kPieceChunks) {
        const std::int64_t len = std::min(n - c * kChunk, kChunk * kPieceChunks), whole = len / kChunk;
        copy_elements(a, c * kChunk, len, piece.data());
        tandem::visit_op(per_chunk, [&]<Op O>(std::integral_constant<Op, O>) {
          if constexpr (std::is_same_v<tandem::op_result_t<O, T>, C>) {  // (sum, sumsq, prod: per_chunk's ops)
            if (whole > 0)
              eng.reduce<O>(tandem::MatrixView<const T>{piece.data(), std::size_t(whole), std::size_t(kChunk),
                                                        std::size_t(kChunk)},
                            Per::row, std::span<C>(values.data() + c, std::size_t(whole)), o);
            if (len > whole * kChunk)
              values[std::size_t(c + whole)] = eng.reduce<O>(
                  std::span<const T>(piece.data() + whole * kChunk, std::size_t(len - whole * kChunk)), o);
          }
        });
      }
      tandem::visit_op(of_values, [&]<Op O>(std::integral_constant<Op, O>) {
        if constexpr (std::is_same_v<tandem::op_result_t<O, C>, C>) {  // (sum, prod: of_values's ops)
          const C total = eng.reduce<O>(std::span<const C>(values), o);
          real = op == Op::mean ? tandem::detail::mean_value(total, double(n)) : double(total);
        }
      });
    }
  });
}

// The full reduction of device array `a`, its elements one run `stride` apart, into the 0-d array `value`
// (its library's, of the op's computed type), on the engine's stream.
void device_reduce(Op op, const Array& a, std::int64_t stride, const Array& value, const tandem::ReduceOptions& o,
                   const tandem::Engine& eng) {
  const auto n = std::size_t(a.size());
  const auto step = std::size_t(n <= 1 ? 1 : stride);  // (0: a broadcast, one element read n times)
  tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    const auto buf = eng.wrap(static_cast<T*>(a.data), std::size_t(a.extent()));
    const auto view = buf.view(0, n, step);
    py::gil_scoped_release unlocked;
    tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using R = tandem::op_buffer_result_t<O, T>;
      eng.reduce_into<O>(view, eng.wrap(static_cast<R*>(value.data), 1), 0, o);
    });
  });
}

bool repeats_per_axis(Op op, Dtype input, bool deterministic) {
  return repeats_in_place(op, input, deterministic) && !tandem::is_arg(op) && (op != Op::mean || is_float(input));
}

py::object repeat_result(Op op, const py::object& v, Lib lib, Dtype& type, std::int64_t repeats) {
  if (op != Op::sum && op != Op::sumsq && op != Op::prod) return v;
  if (is_float(type)) {
    type = Dtype::f64;
    const py::object wide = library_cast(v, lib, Dtype::f64);
    const OverflowQuiet quiet(lib);  // (NumPy's overflow to inf without its warning, as the engine's)
    return op == Op::prod ? wide.attr("__pow__")(double(repeats)) : wide.attr("__mul__")(repeats);
  }
  const bool is_unsigned = tandem::info(type).is_unsigned;  // (int64's products wrap modulo 2^64)
  const py::object x = is_unsigned ? library_view(v, lib, Dtype::i64) : v;
  py::object r = op == Op::prod ? x.attr("__mul__")(0).attr("__add__")(1) : x.attr("__mul__")(repeats);
  py::object base = x;
  for (auto e = std::uint64_t(op == Op::prod ? repeats : 0); e != 0; e >>= 1) {  // (x^repeats by squaring)
    if (e & 1) r = r.attr("__mul__")(base);
    if (e > 1) base = base.attr("__mul__")(base);
  }
  return is_unsigned ? library_view(r, lib, type) : r;
}

// Whether a full reduction of a CuPy or PyTorch broadcast may read its distinct elements once
// (device_distinct): where repeats_in_place allows.
bool device_distinct_allowed(Op op, const Array& a, bool deterministic) {
  return (a.lib == Lib::cupy || a.lib == Lib::torch) && repeats_in_place(op, a.dtype, deterministic);
}

// reduce_distinct for a CuPy or PyTorch broadcast: its distinct elements (the library's view without the
// repeated axes; copied by the library where they are not one run) reduced into a 0-d array, which the
// library's own operations then map (argmin / argmax: to the first repeat's index), scale (a sum times the
// repeats: integers modulo 2^64, floats in float64 as the host does, `computed` then float64) or raise to the
// repeats' power (integers by squaring, modulo 2^64; floats in float64), in stream order. A deterministic
// integer mean (repeated_integer_mean) is computed on the host from the distinct elements' sum and mean,
// which waits for them.
py::object device_distinct(Op op, const Input& in, const tandem::ReduceOptions& o, Dtype& computed) {
  const Array& a = in.a;
  const CupyDevice on(a);  // (CuPy's operations below run on a's GPU)
  Array distinct = device_array(a.keep[distinct_index(a)], in.stream);
  std::int64_t stride = 1;
  if (!distinct.one_run(stride)) distinct = contiguous_device_copy(distinct, in.stream), stride = 1;
  Array value = new_array_like(a, {}, computed);
  device_reduce(op, distinct, stride, value, o, *in.eng);
  const std::int64_t repeats = a.size() / distinct.size();
  py::object v = value.keep;
  if (tandem::is_arg(op)) {  // distinct element k (C order) is at index sum_d (k / inner_d % shape_d) * below_d
    py::object at = v.attr("__mul__")(0);
    std::int64_t inner = 1, below = 1;
    for (int d = a.ndim() - 1; d >= 0; --d) {
      const auto u = std::size_t(d);
      if (a.shape[u] > 1 && a.strides[u] != 0) {
        const py::object digit = v.attr("__floordiv__")(inner).attr("__mod__")(a.shape[u]);
        at = at.attr("__add__")(digit.attr("__mul__")(below));
        inner *= a.shape[u];
      }
      below *= a.shape[u];
    }
    return at;
  }
  if (op == Op::sum || op == Op::sumsq || op == Op::prod) return repeat_result(op, v, a.lib, computed, repeats);
  if (op == Op::mean && !is_float(a.dtype) && o.deterministic) {
    const Dtype sum_type = tandem::result_dtype(Op::sum, a.dtype);
    Array sum = new_array_like(a, {}, sum_type);
    device_reduce(Op::sum, distinct, stride, sum, o, *in.eng);
    const py::object wrapped =
        tandem::info(sum_type).is_unsigned ? library_view(sum.keep, a.lib, Dtype::i64) : sum.keep;
    const double mean = repeated_integer_mean(wrapped.attr("item")().cast<std::int64_t>(),
                                              v.attr("item")().cast<double>(), distinct.size(), repeats, a.size());
    library_copy(v, py::float_(mean), a.lib);  // (item() waited for the library's stream, the engine's)
  }
  return v;
}

// reduce_in_pieces for a CuPy or PyTorch broadcast: each piece copied by the library (copy_device_elements)
// into one device array of 2^20 elements, its chunks reduced per row into the chunk values, then step 4 on
// the device, in stream order. A mean, and the result of a 16-bit type, take their last step on the host, as
// the host's (mean_value, the rounding to `type` with NaN's bits), which waits for the sum.
py::object device_in_pieces(Op op, const Input& in, Dtype type, const tandem::ReduceOptions& o, Dtype& computed) {
  namespace canonical = tandem::detail::canonical;
  const Array& a = in.a;
  const CupyDevice on(a);
  const tandem::Engine& eng = *in.eng;
  py::object result;
  tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (tandem::is_floating_v<T>) {
      using C = tandem::compute_t<T>;
      constexpr std::int64_t kChunk = canonical::kChunk, kPieceChunks = 256;  // 2^20 elements a piece
      const std::int64_t n = a.size(), chunks = (n + kChunk - 1) / kChunk, size = std::min(n, kChunk * kPieceChunks);
      const Op per_chunk = op == Op::mean ? Op::sum : op, of_values = op == Op::prod ? Op::prod : Op::sum;
      const Array values = new_array_like(a, {chunks}, tandem::dtype_of<C>), piece = new_array_like(a, {size}, a.dtype);
      const auto piece_buf = eng.wrap(static_cast<T*>(piece.data), std::size_t(size));
      const auto values_buf = eng.wrap(static_cast<C*>(values.data), std::size_t(chunks));
      for (std::int64_t c = 0; c < chunks; c += kPieceChunks) {
        const std::int64_t len = std::min(n - c * kChunk, kChunk * kPieceChunks), whole = len / kChunk;
        py::list index;
        copy_device_elements(a, index, 0, c * kChunk, len, piece.keep, 0);
        py::gil_scoped_release unlocked;
        tandem::visit_op(per_chunk, [&]<Op O>(std::integral_constant<Op, O>) {
          if constexpr (std::is_same_v<tandem::op_result_t<O, T>, C>) {  // (sum, sumsq, prod: per_chunk's ops)
            if (whole > 0)
              eng.reduce<O>(
                  tandem::BufferMatrix<T>{&piece_buf, 0, std::size_t(whole), std::size_t(kChunk), std::size_t(kChunk)},
                  Per::row, eng.wrap(static_cast<C*>(values.data) + c, std::size_t(whole)), o);
            if (len > whole * kChunk)
              eng.reduce_into<O>(piece_buf.view(std::size_t(whole * kChunk), std::size_t(len - whole * kChunk)),
                                 values_buf, std::size_t(c + whole), o);
          }
        });
      }
      Array value = new_array_like(a, {}, tandem::dtype_of<C>);
      device_reduce(of_values, values, 1, value, o, eng);
      computed = tandem::dtype_of<C>, result = value.keep;
      if (op == Op::mean || !std::is_same_v<T, C>) {  // (the last rounding as the host's: NaN's bits too)
        const C total = C(value.keep.attr("item")().cast<double>());
        const double real = op == Op::mean ? tandem::detail::mean_value(total, double(n)) : double(total);
        computed = type, result = device_scalar(a, type, numpy_scalar(type, real));
      }
    }
  });
  return result;
}

}  // namespace tandem_python
