// The reductions tandem runs: one row per op in the table below. Everything that depends on the set of
// ops reads it from here: the Op enum and its names, the typed calls of Engine and tandem::mpi::Engine
// (eng.sum(x), eng.sum(m, Per::row, out), eng.sum_into(x, out), eng.reduce<Op::sum>(x), ...), their
// result types, the engine's checks and result handling, the combine across devices and MPI ranks, the
// backends' dispatch, Python's methods, the CLI, the benchmarks, the fuzzers and the tests.
// docs/ARCHITECTURE.md says what else a new op needs (its operator in common/reduce_ops.hpp and
// its independent reference in verify/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "tandem/dtype.hpp"
#include "tandem/error.hpp"

namespace tandem {

// What an op returns for elements of type T.
enum class ResultKind : std::uint8_t {
  sum,    // sum_result_t<T>: int64 for signed integers and bool, uint64 for unsigned ones (wrapping modulo
          // 2^64), float for bfloat16 / half, else T (sum, sumsq, prod)
  value,  // compute_t<T>: one of the elements, as the type it is computed in (float for bfloat16 / half)
  mean,   // double: the result of the op it is computed as, divided by the number of elements
  index,  // the index of an element of the input (std::size_t; std::int64_t when stored in a Buffer)
};

// What an op gives for an empty input (an empty row or column of the per-row / per-column forms too).
enum class EmptyRule : std::uint8_t {
  zero,   // +0.0 (integers: 0)
  one,    // 1 (the empty product)
  error,  // throws tandem::Error
};

// Where combining starts: the value that changes nothing (the backends' operators take it from here).
enum class Identity : std::uint8_t {
  zero,     // 0 (floats: -0.0, which keeps the sign of a sum of only -0.0)
  highest,  // +infinity, or the integer type's largest value (min, argmin)
  lowest,   // -infinity, or the integer type's lowest value (max, argmax)
  one,      // 1 (prod)
};

// ---- The table ------------------------------------------------------------------------------------
// X(name, result, empty, computed_as, identity, description, ...): computed_as is the op the backends
// run for it (the op itself, or, for mean, sum, whose result is divided by n: by the engine for a
// scalar result, by the backend for results it stores itself, ReduceArgs / MatrixReduceArgs::divide in
// common/backend.hpp); identity is that op's starting value; description says what it returns, in the
// words of errors and help texts. Arguments after X are passed on to every X(...).
#define TANDEM_OPS(X, ...)                                                                                             \
  X(sum, sum, zero, sum, zero, "the sum", __VA_ARGS__)                                                                 \
  X(min, value, error, min, highest, "the least element", __VA_ARGS__)                                                 \
  X(max, value, error, max, lowest, "the greatest element", __VA_ARGS__)                                               \
  X(mean, mean, error, sum, zero, "the mean, sum / n (integers: the exact sum)", __VA_ARGS__)                          \
  X(argmin, index, error, argmin, highest, "the index of the first least element (the first NaN if any)", __VA_ARGS__) \
  X(argmax, index, error, argmax, lowest, "the index of the first greatest element (the first NaN if any)",            \
    __VA_ARGS__)                                                                                                       \
  X(sumsq, sum, zero, sumsq, zero, "the sum of squares", __VA_ARGS__)                                                  \
  X(prod, sum, one, prod, one, "the product (integers: modulo 2^64)", __VA_ARGS__)

enum class Op : std::uint8_t {
#define TANDEM_OP_ENUMERATOR(name, ...) name,
  TANDEM_OPS(TANDEM_OP_ENUMERATOR)
#undef TANDEM_OP_ENUMERATOR
};

struct OpInfo {
  Op id;
  const char* name;
  ResultKind result;
  EmptyRule empty;
  Op computed_as;  // the op the backends run: itself, or (mean) the op whose result is divided by n
  Identity identity;
  const char* description;
};

// One OpInfo per op, indexed by Op.
inline constexpr OpInfo ops[] = {
#define TANDEM_OP_ROW(name, result, empty, computed_as, identity, description, ...) \
  {Op::name, #name, ResultKind::result, EmptyRule::empty, Op::computed_as, Identity::identity, description},
    TANDEM_OPS(TANDEM_OP_ROW)
#undef TANDEM_OP_ROW
};

inline constexpr Op all_ops[] = {
#define TANDEM_OP_VALUE(name, ...) Op::name,
    TANDEM_OPS(TANDEM_OP_VALUE)
#undef TANDEM_OP_VALUE
};

// ---- Derived from the table -----------------------------------------------------------------------

constexpr const OpInfo& info(Op op) { return ops[static_cast<std::size_t>(op)]; }
constexpr const char* to_string(Op op) {
  return static_cast<std::size_t>(op) < std::size(ops) ? info(op).name : "unknown op";
}
// The Op named `name` (as to_string spells it), or nothing.
constexpr std::optional<Op> parse_op(std::string_view name) {
  for (const OpInfo& o : ops)
    if (name == o.name) return o.id;
  return std::nullopt;
}

// The op carries the index of an element (argmin, argmax).
constexpr bool is_arg(Op op) { return info(op).result == ResultKind::index; }
// The backends run it as itself (every op but mean, which reaches them as sum, with `divide` set where the
// backend stores the result: common/backend.hpp).
constexpr bool is_backend_op(Op op) { return info(op).computed_as == op; }

// The type op O returns for elements of type T (the typed calls of Engine), and the type it is stored as
// in a Buffer (indices as std::int64_t, an element type).
template <ResultKind K, class T>
struct result_of_kind;
template <class T>
struct result_of_kind<ResultKind::sum, T> {
  using type = sum_result_t<T>;
};
template <class T>
struct result_of_kind<ResultKind::value, T> {
  using type = compute_t<T>;
};
template <class T>
struct result_of_kind<ResultKind::mean, T> {
  using type = double;
};
template <class T>
struct result_of_kind<ResultKind::index, T> {
  using type = std::size_t;
};
template <Op O, class T>
using op_result_t = typename result_of_kind<info(O).result, T>::type;
template <Op O, class T>
using op_buffer_result_t = std::conditional_t<info(O).result == ResultKind::index, std::int64_t, op_result_t<O, T>>;

// The type var and std (Engine::var, Engine::std) compute in and return for elements of type T: the
// compute type of floating-point T (float for float, bfloat16 and half; double for double), double for
// integers and bool (NumPy's result types, 16-bit floats widened as everywhere in tandem).
template <class T>
using var_result_t = std::conditional_t<is_floating_v<T>, compute_t<T>, double>;

// The Dtype of op's result for elements of dtype d, as a Buffer holds it (indices: int64).
constexpr Dtype result_dtype(Op op, Dtype d) {
  switch (info(op).result) {
    case ResultKind::sum:
      return info(d).sum_result;
    case ResultKind::value:
      return info(d).compute;
    case ResultKind::mean:
      return Dtype::f64;
    case ResultKind::index:
      return Dtype::i64;
  }
  return d;  // (not reached: the switch covers every kind)
}

static_assert(
    [] {
      for (std::size_t i = 0; i < std::size(ops); ++i)
        if (static_cast<std::size_t>(ops[i].id) != i || !is_backend_op(ops[i].computed_as)) return false;
      return true;
    }(),
    "TANDEM_OPS: rows in Op order, and every computed_as an op the backends run itself");

// f(std::integral_constant<Op, O>{}) for the op `op`: run-time ops to compile-time code, e.g.
//   visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) { return eng.reduce<O>(x); });
template <class F>
decltype(auto) visit_op(Op op, F&& f) {
  switch (op) {
#define TANDEM_OP_CASE(name, ...) \
  case Op::name:                  \
    return f(std::integral_constant<Op, Op::name>{});
    TANDEM_OPS(TANDEM_OP_CASE)
#undef TANDEM_OP_CASE
  }
  throw Error("tandem: Op value " + std::to_string(int(op)) + " is not an op of the table (include/tandem/ops.hpp)");
}

}  // namespace tandem
