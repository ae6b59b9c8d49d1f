// The op's result from the backend's: executors (one device, a Group, the ranks of tandem::mpi::Engine)
// give the backend result of the op's computed_as (backend_result_t: an integer sum exact, an index as int64);
// the engine turns it into what the op table says the op returns (op_result_t), here and only here.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"

namespace tandem::detail {

// The largest backend result (an ExactSum, an ArgAcc's parts): the bytes an executor may write.
inline constexpr std::size_t kBackendResultBytes = 16;

// Writes op's result (op_result_t of dtype) into *result from `backend` (backend_result_t of op's
// computed_as) over `count` elements: a sum's value (an integer sum modulo 2^64), a mean as the exact sum
// divided by count, an index as std::size_t, a value as it is; NaN as the canonical quiet NaN.
inline void api_result(Op op, Dtype dtype, const void* backend, std::uint64_t count, void* result) {
  visit(dtype, [&]<class T>(std::type_identity<T>) {
    visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      constexpr Op computed = info(O).computed_as;
      using B = backend_result_t<computed, T>;
      using R = op_result_t<O, T>;
      B b;
      std::memcpy(&b, backend, sizeof b);
      if constexpr (info(O).result == ResultKind::mean) {
        const double m = mean_value(b, double(count));
        std::memcpy(result, &m, sizeof m);
      } else if constexpr (info(O).result == ResultKind::index) {
        if (b < 0 || std::uint64_t(b) >= count)
          throw Error(std::string(to_string(op)) + ": the backend returned index " + std::to_string(b) + " for " +
                      std::to_string(count) + " elements (a bug in tandem; please report it)");
        const std::size_t i = std::size_t(b);
        std::memcpy(result, &i, sizeof i);
      } else if constexpr (info(O).result == ResultKind::sum) {
        const R v = canonical_nan(sum_value<T>(b));
        std::memcpy(result, &v, sizeof v);
      } else {
        const R v = canonical_nan(R(b));
        std::memcpy(result, &v, sizeof v);
      }
    });
  });
}

}  // namespace tandem::detail
