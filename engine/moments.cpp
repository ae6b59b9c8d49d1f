// Engine::var and Engine::std (include/tandem/engine.hpp): NumPy's two passes over the engine's own
// reductions. The mean (Op::mean, a double) rounded to the working type W = var_result_t<T>: for float and
// the 16-bit types the mean of the elements converted to double (exactly: their sum is exact up to 2^29
// elements, so a constant input's deviations are 0), for integers from the exact sum. Then the deviations
// W(x) - mean into a temporary by the elementwise pass of common/select.hpp (host memory, or a Buffer where
// a Buffer input lies; one rounding per element: the same on every backend), their sum of
// squares (Op::sumsq, in the canonical order in deterministic mode), one division by n - ddof, std's sqrt.
// The Python module computes the same steps with the array's library (python/moments.cpp), so both give the
// same bits.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "common/dispatch.hpp"
#include "engine/extent.hpp"
#include "engine/resident.hpp"
#include "engine/validate.hpp"
#include "tandem/engine.hpp"

namespace tandem {

namespace {

// Runs f; an error in one of its passes is the call's own: the same kind, argument and hint, its problem
// prefixed with the call's name ("var: ...").
template <class F>
void as_call(const char* name, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    throw Error(e.kind(), e.argument(), Message(name, ": ", e.problem()), e.hint());
  }
}

void check_degrees(const char* name, std::size_t n, double ddof, const char* each) {
  if (!(double(n) - ddof > 0))
    throw value_error(std::string("tandem: ") + name + " of " + std::to_string(n) + " element" + (n == 1 ? "" : "s") +
                      each + " with ddof " + std::to_string(ddof) +
                      " has no value (n - ddof <= 0); pass ddof < n (0: the population's, 1: the sample's)");
}

// The elements of a rows x cols input (a vector: 1 x count) that take part: every one, or where's true entries (one per
// element of a host input; initial is not taken, as NumPy's var takes none).
std::size_t kept_count(const char* name, const ReduceOptions& o, std::size_t rows, std::size_t cols) {
  if (o.initial)
    throw value_error(Arg::initial, Message(name, " takes no ", Arg::initial, " (NumPy's takes none either)"));
  if (!detail::where_given(o)) return rows * cols;
  detail::check_where(o, rows, cols);
  std::size_t n = 0;
  for (bool k : o.where) n += k;
  return n;
}

template <class W>
W finish(W sum_of_squares, std::size_t n, double ddof, bool root) {
  const W v = sum_of_squares / W(double(n) - ddof);
  return root ? std::sqrt(v) : v;
}

}  // namespace

void Engine::moment_entry(bool root, const detail::ReduceInput& in, double ddof, const ReduceOptions& opts,
                          void* result) const {
  const char* name = root ? "std" : "var";
  const std::size_t n = kept_count(name, opts, 1, in.count);
  check_degrees(name, n, ddof, detail::where_given(opts) ? " kept by where" : "");
  ReduceOptions plain = opts;
  plain.where = {};
  as_call(name, [&] { (void)detail::check_reduce(*exec_, Op::mean, in, opts); });  // (before anything reads it)
  const bool resident = in.in_buffer && in.count > 0;
  if (resident && !detail::on_device(detail::elements_of(in))) {  // (a multi-device engine's Buffer)
    const detail::HostStaged host = detail::stage_on_host(in);
    return moment_entry(root, host.vector, ddof, opts, result);
  }
  detail::visit(in.dtype, [&]<class T>(std::type_identity<T>) {
    using W = var_result_t<T>;
    double mean = 0;
    if constexpr (is_floating_v<T> && !std::is_same_v<T, double>) {  // the mean of the elements as doubles
      if (resident) {
        const double zero = 0;
        const auto wide = detail::select_resident(*exec_, in.dtype, detail::elements_of(in), {}, nullptr,
                                                  detail::SelectArgs::Shift::none, Dtype::f64, &zero);
        as_call(name, [&] { reduce_entry(Op::mean, detail::resident_input(Dtype::f64, wide, in.count), opts, &mean); });
      } else {
        const auto wide = detail::select_host<double>(in.dtype, in.data, 1, in.count, 0, in.stride, {}, nullptr,
                                                      detail::SelectArgs::Shift::none, 0.0);
        as_call(name, [&] { reduce_entry(Op::mean, detail::host_input(wide.get(), in.count, 1), opts, &mean); });
      }
    } else {  // (double as it is; integers from the exact sum)
      as_call(name, [&] { reduce_entry(Op::mean, in, opts, &mean); });
    }
    W sq{};
    if (resident) {  // the deviations in a Buffer, where the input lies
      const auto shift = exec_->allocate(1, sizeof(double));
      shift->upload(0, &mean, sizeof mean);
      const W zero = W(0);
      const auto d = detail::select_resident(*exec_, in.dtype, detail::elements_of(in), opts.where, shift.get(),
                                             detail::SelectArgs::Shift::one, dtype_of<W>, &zero);
      as_call(name, [&] { reduce_entry(Op::sumsq, detail::resident_input(dtype_of<W>, d, in.count), plain, &sq); });
    } else {
      const auto d = detail::select_host<W>(in.dtype, in.data, 1, in.count, 0, in.stride, opts.where, &mean,
                                            detail::SelectArgs::Shift::one, W(0));
      as_call(name, [&] { reduce_entry(Op::sumsq, detail::host_input(d.get(), in.count, 1), plain, &sq); });
    }
    *static_cast<W*>(result) = finish(sq, n, ddof, root);
  });
}

void Engine::moment_per(bool root, Per per, const detail::MatrixInput& a, const detail::ReduceOutput& out, double ddof,
                        const ReduceOptions& opts) const {
  const char* name = root ? "std" : "var";
  const std::size_t count = per == Per::row ? a.rows : a.cols, length = per == Per::row ? a.cols : a.rows;
  detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    using W = var_result_t<T>;
    if (out.in_buffer ? out.size < count : out.size != count)
      throw value_error(std::string("tandem: ") + name + " (per " + to_string(per) + "): the output has " +
                        std::to_string(out.size) + " elements but the matrix has " + std::to_string(count) + " " +
                        (per == Per::row ? "rows" : "columns") + "; pass one result per " + to_string(per) +
                        (out.in_buffer ? " (a Buffer of at least that many)" : ""));
    (void)kept_count(name, opts, a.rows, a.cols);
    if (count == 0) return;
    if (!out.in_buffer && out.data == nullptr)
      throw value_error(std::string("tandem: ") + name + ": the output span is null but has " + std::to_string(count) +
                        " elements");
    std::vector<std::size_t> n(count, length);
    if (detail::where_given(opts)) {
      std::fill(n.begin(), n.end(), 0);
      for (std::size_t i = 0; i < a.rows; ++i)
        for (std::size_t j = 0; j < a.cols; ++j) n[per == Per::row ? i : j] += opts.where[i * a.cols + j];
    }
    for (std::size_t k = 0; k < count; ++k)
      check_degrees(name, n[k], ddof,
                    (std::string(per == Per::row ? " of row " : " of column ") + std::to_string(k) +
                     (detail::where_given(opts) ? " kept by where" : ""))
                        .c_str());
    ReduceOptions plain = opts;
    plain.where = {};
    std::vector<double> means(count);
    const auto means_out = detail::host_output(std::span<double>(means));
    // (the matrix, the output and the kernel as the call's own, before anything reads them)
    as_call(name,
            [&] { (void)detail::check_reduce_per(*exec_, Op::mean, per, a, out.in_buffer ? out : means_out, opts); });
    std::vector<W> sq(count), results(count);
    if (a.in_buffer) {
      if (a.rows * a.cols > 0 && !detail::on_device(detail::elements_of(a))) {  // (a multi-device engine's Buffer)
        const detail::HostStaged host = detail::stage_on_host(a);
        moment_per(root, per, host.matrix, detail::host_output(std::span<W>(results)), ddof, opts);
        return detail::write_results(out, results.data(), count);
      }
      // The means and the deviations in Buffers, where the input lies.
      const auto mean_buffer = exec_->allocate(count, sizeof(double));
      detail::MatrixInput source = a;
      std::shared_ptr<detail::Allocation> wide;
      if constexpr (is_floating_v<T> && !std::is_same_v<T, double>) {  // the means of the elements as doubles
        const double zero = 0;
        wide = detail::select_resident(*exec_, a.dtype, detail::elements_of(a), {}, nullptr,
                                       detail::SelectArgs::Shift::none, Dtype::f64, &zero);
        source = detail::resident_matrix(Dtype::f64, wide, a.rows, a.cols);
      }
      as_call(name, [&] {
        reduce_per(Op::mean, per, source, detail::resident_output(mean_buffer, count, sizeof(double)), opts);
      });
      const W zero = W(0);
      const auto d = detail::select_resident(
          *exec_, a.dtype, detail::elements_of(a), opts.where, mean_buffer.get(),
          per == Per::row ? detail::SelectArgs::Shift::row : detail::SelectArgs::Shift::col, dtype_of<W>, &zero);
      const auto sq_buffer = exec_->allocate(count, sizeof(W));
      as_call(name, [&] {
        reduce_per(Op::sumsq, per, detail::resident_matrix(dtype_of<W>, d, a.rows, a.cols),
                   detail::resident_output(sq_buffer, count, sizeof(W)), plain);
      });
      sq_buffer->download(0, sq.data(), count * sizeof(W));
    } else {
      if constexpr (is_floating_v<T> && !std::is_same_v<T, double>) {  // the means of the elements as doubles
        const auto wide = detail::select_host<double>(a.dtype, a.data, a.rows, a.cols, a.ld, 1, {}, nullptr,
                                                      detail::SelectArgs::Shift::none, 0.0);
        const MatrixView<const double> w{wide.get(), a.rows, a.cols, a.cols};
        as_call(name, [&] { reduce_per(Op::mean, per, detail::host_matrix(w), means_out, opts); });
      } else {  // (double as it is, integers from the exact sums)
        as_call(name, [&] { reduce_per(Op::mean, per, a, means_out, opts); });
      }
      const auto d = detail::select_host<W>(
          a.dtype, a.data, a.rows, a.cols, a.ld, 1, opts.where, means.data(),
          per == Per::row ? detail::SelectArgs::Shift::row : detail::SelectArgs::Shift::col, W(0));
      as_call(name, [&] {
        reduce_per(Op::sumsq, per, detail::host_matrix(MatrixView<const W>{d.get(), a.rows, a.cols, a.cols}),
                   detail::host_output(std::span<W>(sq)), plain);
      });
    }
    for (std::size_t k = 0; k < count; ++k) results[k] = finish(sq[k], n[k], ddof, root);
    detail::write_results(out, results.data(), count);
  });
}

}  // namespace tandem
