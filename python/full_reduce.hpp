// Full reductions (axis=None) of the Python module's arrays: of one strided run (host_reduce, device_reduce),
// and of a broadcast that is not one run without a copy of it: its distinct elements read once
// (reduce_distinct, device_distinct, where repeats_in_place allows), or in deterministic mode its elements a
// piece at a time (reduce_in_pieces, device_in_pieces, where canonical_in_pieces allows).
#pragma once

#include <cstdint>

#include "python/engine.hpp"

namespace tandem_python {

// The reduction of a host array whose elements are one run `stride` apart (0: a broadcast of one element,
// read as often as it repeats): an integer result into `integer` (and `real`), a floating one into `real`.
void host_reduce(tandem::Op op, const Array& a, std::int64_t stride, const tandem::ReduceOptions& o,
                 const tandem::Engine& eng, double& real, std::int64_t& integer);

// The full reduction of device array `a`, its elements one run `stride` apart, into the 0-d array `value`
// (its library's, of the op's computed type), on the engine's stream.
void device_reduce(tandem::Op op, const Array& a, std::int64_t stride, const Array& value,
                   const tandem::ReduceOptions& o, const tandem::Engine& eng);

// Whether op's result over a broadcast of `input` elements follows from its distinct elements read once.
bool repeats_in_place(tandem::Op op, tandem::Dtype input, bool deterministic);
// The full reduction of a host broadcast that is not one run from its distinct elements.
void reduce_distinct(tandem::Op op, const Array& a, const tandem::ReduceOptions& o, const tandem::Engine& eng,
                     double& real, std::int64_t& integer);

// Whether op's deterministic result follows the canonical order that reduce_in_pieces computes.
bool canonical_in_pieces(tandem::Op op, tandem::Dtype input, bool deterministic);
// The deterministic float sum, sum of squares, mean or product of a host broadcast, a piece at a time.
void reduce_in_pieces(tandem::Op op, const Array& a, const tandem::ReduceOptions& o, const tandem::Engine& eng,
                      double& real);

// Whether op over a reduced axis of repeats (stride 0) follows from one of them, the result then repeated by
// repeat_result: min and max; integer sums, sums of squares and products; float ones, and float means,
// outside deterministic mode.
bool repeats_per_axis(tandem::Op op, tandem::Dtype input, bool deterministic);
// The result of op over `repeats` repeats of the elements whose result is v (an array of library `lib`, of
// type `type`): a sum times the repeats, a product to their power (integers modulo 2^64, unsigned ones through
// int64's bits; floats in float64, `type` then float64), any other op's v itself.
py::object repeat_result(tandem::Op op, const py::object& v, Lib lib, tandem::Dtype& type, std::int64_t repeats);

// Whether a full reduction of a CuPy or PyTorch broadcast may read its distinct elements once.
bool device_distinct_allowed(tandem::Op op, const Array& a, bool deterministic);
// reduce_distinct for a CuPy or PyTorch broadcast: a 0-d array of its library, of type `computed` (which it
// sets to float64 where it scales a float result in float64).
py::object device_distinct(tandem::Op op, const Input& in, const tandem::ReduceOptions& o, tandem::Dtype& computed);
// reduce_in_pieces for a CuPy or PyTorch broadcast: a 0-d array of its library, of type `computed` (which it
// sets: the compute type, or the result's `type` where the last step runs on the host).
py::object device_in_pieces(tandem::Op op, const Input& in, tandem::Dtype type, const tandem::ReduceOptions& o,
                            tandem::Dtype& computed);

}  // namespace tandem_python
