// The members of reduce_table::Part<P> (stages.cuh): the dispatch from (op, dtype) to the instantiated
// kernels for the element types of part P. Included by types_part<P>.cu only, which instantiate it.
#pragma once

#include <string>
#include <type_traits>

#include "backends/cuda/reduce/stages.cuh"

namespace tandem::cuda::reduce_table {

// f.template operator()<Operator, T>() for operator O of element type T, for the types of part P only (the
// caller routes every other type to its own part).
template <int P, class F>
void visit_part(Op op, Dtype dtype, F&& f) {
  detail::visit_part<P>(dtype, [&]<class T>(std::type_identity<T>) {
    detail::visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      f.template operator()<O, typename detail::OpFor<O, T>::type, T>();
    });
  });
}

template <int P>
void Part<P>::reduce(std::size_t stage, Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride,
                     void* d_result, Workspace& ws, cudaStream_t stream) {
  visit_part<P>(op, dtype, [&]<Op O, class Operator, class T>() {
    const auto run = kStages<Operator>.at(stage).run;
    if (!run)  // (the engine checks KernelInfo first)
      throw Error("CUDA reduce stage '" + std::string(kRows.at(stage).name) + "' does not run " + to_string(op) +
                  " of " + to_string(dtype));
    run(static_cast<const T*>(x), n, stride, static_cast<typename Operator::Acc*>(d_result), ws, stream);
  });
}

// The op's result (detail::store_result: NaN canonical, a mean divided by count) into out, by the
// reduction's last block.
template <Op O, class T>
struct StoreResult {
  void* out;
  Index count;
  bool divide;
  __device__ void operator()(const typename detail::OpFor<O, T>::type::Acc& acc) const {
    detail::store_result<O, T>(acc, count, divide, out, 0);
  }
};

template <int P>
void Part<P>::single_pass_into(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* out,
                               bool divide, Workspace& ws, cudaStream_t stream) {
  visit_part<P>(op, dtype, [&]<Op O, class Operator, class T>() {
    reduction::reduce_single_pass_to<Operator>(static_cast<const T*>(x), n, stride, StoreResult<O, T>{out, n, divide},
                                               ws, stream);
  });
}

// f.template operator()<Operator, T>() for a sum-like op of a floating dtype, or a tandem::Error.
template <int P, class F>
void visit_canonical(Op op, Dtype dtype, F&& f) {
  visit_part<P>(op, dtype, [&]<Op O, class Operator, class T>() {
    if constexpr (detail::canonical_order<Operator>)
      f.template operator()<Operator, T>();
    else
      throw Error(std::string("deterministic ") + to_string(op) + " of " + to_string(dtype) +
                  ": only sums and products of floating-point values have a canonical order (the others are "
                  "exact already)");
  });
}

template <int P>
void Part<P>::canonical_sum(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* d_result,
                            Workspace& ws, cudaStream_t stream) {
  visit_canonical<P>(op, dtype, [&]<class Operator, class T>() {
    reduction::canonical_sum<Operator>(static_cast<const T*>(x), n, stride, static_cast<compute_t<T>*>(d_result), ws,
                                       stream);
  });
}

template <int P>
void Part<P>::canonical_chunk_values(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride,
                                     void* values, cudaStream_t stream) {
  visit_canonical<P>(op, dtype, [&]<class Operator, class T>() {
    reduction::canonical_chunk_values<Operator>(static_cast<const T*>(x), n, stride, static_cast<compute_t<T>*>(values),
                                                stream);
  });
}

}  // namespace tandem::cuda::reduce_table
