// NumPy's where= and initial= for the reductions (ReduceOptions::where, ReduceOptions::initial), the same on
// every backend because they are computed here, in front of the executors, from the engine's own calls:
// - where: the masked elements are replaced by the op's identity in a copy of the input (0 for the sums,
//   1 for prod, the type's greatest value for min, its least for max: the values python/where.cpp fills in),
//   and the op runs on that copy: in host memory for a host input, in a Buffer made where a Buffer input lies
//   (engine/resident.hpp). mean is the masked sum divided by the number of true entries (an integer
//   input's sum exact).
// - initial: combined with the op's result by one more operation of the op (add, multiply, minimum, maximum)
//   in the result type, as NumPy's initial is the reduction's first element; an empty reduction gives it.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"
#include "engine/extent.hpp"
#include "engine/resident.hpp"
#include "engine/results.hpp"
#include "engine/validate.hpp"
#include "tandem/engine.hpp"

namespace tandem {

namespace {

using detail::where_given;

// The checks of where= and initial= for op over a rows x cols input (a vector: 1 x count).
void check_masks(Op op, std::size_t rows, std::size_t cols, const ReduceOptions& o) {
  const OpInfo& i = info(op);
  if (o.initial && (i.result == ResultKind::mean || i.result == ResultKind::index))
    throw value_error(Arg::initial, Message(i.name, " takes no ", Arg::initial, " (NumPy's takes none either)"),
                      Message(Arg::initial,
                              " is taken by the ops whose result is a sum or an element: sum, sumsq, "
                              "prod, min and max"));
  if (!where_given(o)) return;
  if (i.result == ResultKind::index)
    throw value_error(Arg::where, Message(i.name, " takes no ", Arg::where, " (NumPy's takes none either)"),
                      Message("reduce a copy whose masked elements are the op's identity instead"));
  detail::check_where(o, rows, cols);
  if (i.result == ResultKind::value && !o.initial)
    throw value_error(Arg::where,
                      Message(i.name, " has no identity, so ", Arg::where, " needs ", Arg::initial,
                              " (NumPy's rule): the result where every element is masked"),
                      Message("pass ", Arg::initial, ", e.g. +infinity for min or -infinity for max"));
}

// The value a masked element takes: the op table's identity (identity_value), but +0.0 for the sums, as
// python/where.cpp fills them (the identity's -0.0 would keep the sign of a slice of only -0.0).
template <class T>
T fill_value(Op op) {
  using C = compute_t<T>;
  switch (info(op).identity) {
    case Identity::zero:
      return T(C(0));
    case Identity::one:
      return T(detail::identity_value<Identity::one, C>());
    case Identity::highest:
      return T(detail::identity_value<Identity::highest, C>());
    case Identity::lowest:
      return T(detail::identity_value<Identity::lowest, C>());
  }
  return T{};
}

// initial converted to the result type R: rounded for a float R; an integer R takes integers in its range.
template <class R>
R initial_as(long double v) {
  if constexpr (std::is_floating_point_v<R>) {
    return R(v);
  } else {
    // (long double holds every 64-bit integer exactly: the bounds are the type's own)
    constexpr long double low = std::is_same_v<R, bool> ? 0.0L : (long double)(std::numeric_limits<R>::lowest());
    constexpr long double high = std::is_same_v<R, bool> ? 1.0L : (long double)(std::numeric_limits<R>::max());
    if (!(std::trunc(v) == v) || v < low || v > high)
      throw value_error(Arg::initial,
                        Message(Arg::initial, " ", double(v), " is not a value of the result's type ", dtype_of<R>),
                        Message("pass an integer in that type's range"));
    return R(v);
  }
}

// r combined with initial by one more operation of the op (its Identity says which), in R.
template <class R>
R combine(Identity id, R r, R init) {
  if constexpr (std::is_floating_point_v<R>) {
    if (id == Identity::zero) return detail::canonical_nan(R(r + init));
    if (id == Identity::one) return detail::canonical_nan(R(r * init));
    if (r != r || init != init) return std::numeric_limits<R>::quiet_NaN();
    const bool init_less = init < r || (init == r && std::signbit(init) && !std::signbit(r));
    const bool init_more = init > r || (init == r && !std::signbit(init) && std::signbit(r));
    return (id == Identity::highest ? init_less : init_more) ? init : r;
  } else if constexpr (std::is_same_v<R, bool>) {
    return id == Identity::highest ? (r && init) : (r || init);
  } else {
    using U = std::make_unsigned_t<R>;  // (sums and products wrap modulo 2^64, as the ops' own)
    if (id == Identity::zero) return R(U(r) + U(init));
    if (id == Identity::one) return R(U(r) * U(init));
    return id == Identity::highest ? std::min(r, init) : std::max(r, init);
  }
}

Error all_masked(const char* name, const std::string& where) {
  return value_error(Arg::where,
                     Message(name, where, " has no elements: every entry of ", Arg::where, " for it is false"),
                     Message("keep at least one element (NumPy's mean gives NaN with a RuntimeWarning there)"));
}

// f(r, c) for every element of a rows x cols matrix, on oneTBB's threads, such that the elements of one
// result (a row for Per::row, a column for Per::col) are all visited by one thread, in increasing order:
// ranges of rows, or ranges of 64 columns walked row by row (so that each row's piece is read contiguously).
template <class F>
void for_each_by_result(Per per, std::size_t rows, std::size_t cols, const F& f) {
  if (per == Per::row) {
    const std::size_t grain = std::max<std::size_t>(1, (std::size_t(1) << 15) / std::max<std::size_t>(cols, 1));
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, grain), [&](const tbb::blocked_range<std::size_t>& rg) {
      for (std::size_t r = rg.begin(); r < rg.end(); ++r)
        for (std::size_t c = 0; c < cols; ++c) f(r, c);
    });
  } else {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, cols, 64), [&](const tbb::blocked_range<std::size_t>& rg) {
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = rg.begin(); c < rg.end(); ++c) f(r, c);
    });
  }
}

}  // namespace

void Engine::masked_entry(Op op, const detail::ReduceInput& in, const ReduceOptions& opts, void* result) const {
  check_masks(op, 1, in.count, opts);
  ReduceOptions plain = opts;
  plain.where = {}, plain.initial.reset();
  if (where_given(opts) && in.in_buffer) {
    (void)detail::check_reduce_part(*exec_, op, in, plain);             // (the view, before anything reads it)
    if (in.count > 0 && !detail::on_device(detail::elements_of(in))) {  // (a multi-device engine's Buffer)
      const detail::HostStaged host = detail::stage_on_host(in);
      return masked_entry(op, host.vector, opts, result);
    }
  }
  detail::visit(in.dtype, [&]<class T>(std::type_identity<T>) {
    visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using R = op_result_t<O, T>;
      detail::ReduceInput run = in;
      std::unique_ptr<T[]> copy;
      std::shared_ptr<detail::Allocation> resident;
      std::size_t kept = in.count;
      if (where_given(opts)) {
        (void)detail::check_reduce_part(*exec_, op, in, plain);  // (the input and options, before the copy)
        const T fill = fill_value<T>(op);
        if (in.in_buffer) {
          resident = detail::select_resident(*exec_, in.dtype, detail::elements_of(in), opts.where, nullptr,
                                             detail::SelectArgs::Shift::none, in.dtype, &fill);
          run = detail::resident_input(in.dtype, resident, in.count);
        } else {
          copy = detail::select_host<T>(in.dtype, in.data, 1, in.count, 0, in.stride, opts.where, nullptr,
                                        detail::SelectArgs::Shift::none, fill);
          run = detail::host_input<T>(copy.get(), in.count, 1);
        }
        kept = 0;
        for (bool k : opts.where) kept += k;
      }
      if constexpr (info(O).result == ResultKind::mean) {
        if (in.count > 0 && kept == 0) throw all_masked(info(O).name, "");
        alignas(16) unsigned char backend[detail::kBackendResultBytes] = {};
        exec_->reduce(detail::check_reduce(*exec_, op, run, plain), backend);
        detail::api_result(op, in.dtype, backend, kept, result);  // (the sum divided by the kept count)
      } else {
        R r;
        if (opts.initial && kept == 0) {  // (an empty reduction: initial; the checks first)
          (void)detail::check_reduce_part(*exec_, op, run, plain);
          r = initial_as<R>(*opts.initial);
        } else {
          reduce_entry(op, run, plain, &r);
          if (opts.initial) r = combine(info(O).identity, r, initial_as<R>(*opts.initial));
        }
        *static_cast<R*>(result) = r;
      }
    });
  });
}

void Engine::masked_per(Op op, Per per, const detail::MatrixInput& a, const detail::ReduceOutput& out,
                        const ReduceOptions& opts) const {
  // The matrix, the output and the kernel as the call's own (rows or columns of length 0 take initial).
  (void)detail::check_reduce_per(*exec_, op, per, a, out, opts, opts.initial.has_value());
  check_masks(op, a.rows, a.cols, opts);
  ReduceOptions plain = opts;
  plain.where = {}, plain.initial.reset();
  const std::size_t count = per == Per::row ? a.rows : a.cols, length = per == Per::row ? a.cols : a.rows;
  if (a.in_buffer && a.rows * a.cols > 0 && !detail::on_device(detail::elements_of(a))) {
    // (a multi-device engine's Buffer: its elements and the results through the host)
    const detail::HostStaged host = detail::stage_on_host(a);
    std::vector<unsigned char> results(std::max<std::size_t>(count * out.element_size, 1));
    masked_per(op, per, host.matrix, {results.data(), count, out.element_size}, opts);
    return detail::write_results(out, results.data(), count);
  }
  // (outside the visits below: one instantiation, not one per type)
  std::vector<std::size_t> kept(count, where_given(opts) ? 0 : length);
  if (where_given(opts)) {
    for_each_by_result(per, a.rows, a.cols, [&](std::size_t r, std::size_t c) {
      kept[per == Per::row ? r : c] += opts.where[r * a.cols + c];
    });
  }
  detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using R = op_result_t<O, T>;
      detail::MatrixInput run = a;
      std::unique_ptr<T[]> copy;
      std::shared_ptr<detail::Allocation> resident;
      if (where_given(opts)) {
        const T fill = fill_value<T>(op);
        if (a.in_buffer) {
          resident = detail::select_resident(*exec_, a.dtype, detail::elements_of(a), opts.where, nullptr,
                                             detail::SelectArgs::Shift::none, a.dtype, &fill);
          run = detail::resident_matrix(a.dtype, resident, a.rows, a.cols);
        } else {
          copy = detail::select_host<T>(a.dtype, a.data, a.rows, a.cols, a.ld, 1, opts.where, nullptr,
                                        detail::SelectArgs::Shift::none, fill);
          run = detail::host_matrix(MatrixView<const T>{copy.get(), a.rows, a.cols, a.cols});
        }
      }
      if constexpr (info(O).result == ResultKind::mean) {
        for (std::size_t k = 0; k < count; ++k)
          if (kept[k] == 0)
            throw all_masked(info(O).name, " of " + std::string(to_string(per)) + " " + std::to_string(k));
        std::vector<double> o(count);
        if constexpr (std::is_integral_v<T>) {  // (the exact sums: the same in any order, so added here)
          if (resident) {                       // (the masked copy, here: the exact sums are added on the host)
            copy = std::make_unique_for_overwrite<T[]>(a.rows * a.cols);
            if (a.rows * a.cols > 0) resident->download(0, copy.get(), a.rows * a.cols * sizeof(T));
          }
          std::vector<detail::ExactSum> sums(count);
          for_each_by_result(per, a.rows, a.cols, [&](std::size_t r, std::size_t c) {
            const T v = copy[r * a.cols + c];
            sums[per == Per::row ? r : c] += std::is_unsigned_v<T> ? detail::ExactSum::of_unsigned(std::uint64_t(v))
                                                                   : detail::ExactSum::of(std::int64_t(v));
          });
          for (std::size_t k = 0; k < count; ++k) o[k] = detail::mean_value(sums[k], double(kept[k]));
        } else {
          using S = sum_result_t<T>;
          std::vector<S> sums(count);
          if (resident) {  // (a Buffer input: its sums in a Buffer, then here)
            const auto on_device = exec_->allocate(count, sizeof(S));
            reduce_per(Op::sum, per, run, detail::resident_output(on_device, count, sizeof(S)), plain);
            on_device->download(0, sums.data(), count * sizeof(S));
          } else {
            reduce_per(Op::sum, per, run, detail::host_output(std::span<S>(sums)), plain);
          }
          for (std::size_t k = 0; k < count; ++k) o[k] = detail::mean_value(sums[k], double(kept[k]));
        }
        detail::write_results(out, o.data(), count);
      } else {
        const std::optional<R> init =
            opts.initial ? std::optional<R>(initial_as<R>(*opts.initial)) : std::nullopt;  // (before any write)
        if (!init || length > 0) reduce_per(op, per, run, out, plain);
        if (init) {  // (a row or column with no element kept: initial itself, -0.0 included)
          const auto o = std::make_unique<R[]>(count);  // (a Buffer's results combined here: the call waits)
          if (length > 0 && out.in_buffer) out.allocation->download(0, o.get(), count * sizeof(R));
          if (length > 0 && !out.in_buffer) std::copy_n(static_cast<const R*>(out.data), count, o.get());
          for (std::size_t k = 0; k < count; ++k) o[k] = kept[k] == 0 ? *init : combine(info(O).identity, o[k], *init);
          detail::write_results(out, o.get(), count);
        }
      }
    });
  });
}

}  // namespace tandem
