// tandem::mpi::Engine: one engine per MPI rank, every reduction global over the ranks' parts (built
// when CMake finds MPI: TANDEM_WITH_MPI=AUTO|ON|OFF; link tandem::tandem_mpi).
//
// Each rank passes its local part with the calls of tandem::Engine (host spans, strided host views,
// Buffers and views of them); the data is the concatenation of the parts in rank order, any split
// allowed (empty parts too). Every rank gets the global result: sums and means over all elements,
// min / max with the NaN and signed-zero rules of tandem::Engine, argmin / argmax as the index into the
// concatenated data. Every rank must make the same calls in the same order (they are collective).
// With ReduceOptions::deterministic a float sum is bitwise identical to a single engine's over the
// concatenated data, for any number of ranks and any split: each rank computes the canonical chunk
// values (common/canonical.hpp) of the chunks it holds whole, the chunks that cross rank
// boundaries are assembled from the pieces every rank sends, and every rank sums the chunk values in
// the canonical tree.
// all_reduce: an elementwise sum of every rank's vector, in place on every rank; deterministic: in rank
// order (see the member below).
// Matmul: A and C distributed by row blocks (each rank passes its rows), B the whole matrix on every
// rank; C stays distributed. When every rank is a CUDA rank (and the build has NCCL), the ranks
// exchange results and chunk values through NCCL (one communicator from ncclCommInitRank, its unique id
// broadcast over MPI: transport() says "nccl"), else through MPI; the sizes and checks always go
// through MPI. A CUDA rank uses EngineOptions::device, else TANDEM_DEVICE, else its rank on the node
// (so run at most as many ranks per node as it has GPUs, or name the device).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "tandem/engine.hpp"

namespace tandem::detail {
class RankCollectives;  // common/backend.hpp
}

namespace tandem::mpi {

class Engine : public detail::VectorReductions<Engine> {
 public:
  // The ranks of comm (duplicated: tandem's messages never mix with the application's), collectively:
  // if a rank cannot make its engine, every rank throws. The backend comes from TANDEM_BACKEND (or is
  // given); a CUDA rank without a device named takes TANDEM_DEVICE, else its rank on the node.
  explicit Engine(MPI_Comm comm, EngineOptions options = {});
  Engine(MPI_Comm comm, Backend backend, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm comm() const noexcept { return comm_; }
  // This rank's engine (for Buffers: upload, buffer, wrap).
  const tandem::Engine& local() const noexcept { return *local_; }
  // How the ranks exchange results: "nccl" (every rank a CUDA rank, NCCL in the build) or "mpi".
  const char* transport() const noexcept { return ranks_ ? "nccl" : "mpi"; }

  // The reductions of tandem::Engine (detail::VectorReductions, reductions.hpp: every op of the table,
  // include/tandem/ops.hpp) over the concatenated parts: eng.sum(x), ..., eng.reduce<Op::sum>(x) of this
  // rank's host span or range, StridedView, Buffer or BufferView.

  // This rank's rows of C = alpha * op(A) * op(B) + beta * C: a holds this rank's rows of op(A) (so
  // trans_a is not taken), b the whole of B, c this rank's rows of C (a.rows of them; 0 is fine).
  template <class T>
  requires is_matmul_type_v<T>
  void matmul(MatrixView<const T> a, MatrixView<const T> b, MatrixView<compute_t<T>> c,
              const MatmulOptions& o = {}) const {
    check_matmul(o);
    if (a.rows > 0) local_->matmul(a, b, c, o);
  }
  template <class T>
  requires is_matmul_type_v<T>
  void matmul(BufferMatrix<T> a, BufferMatrix<T> b, BufferMatrix<compute_t<T>> c, const MatmulOptions& o = {}) const {
    check_matmul(o);
    if (a.rows > 0) local_->matmul(a, b, c, o);
  }
  // Mixed input types (Engine::matmul): A and B two different types of float, bfloat16 and half, C float.
  template <class TA, class TB>
  requires is_mixed_matmul_v<TA, TB>
  void matmul(MatrixView<const TA> a, MatrixView<const TB> b, MatrixView<float> c, const MatmulOptions& o = {}) const {
    check_matmul(o);
    if (a.rows > 0) local_->matmul(a, b, c, o);
  }
  template <class TA, class TB>
  requires is_mixed_matmul_v<TA, TB>
  void matmul(BufferMatrix<TA> a, BufferMatrix<TB> b, BufferMatrix<float> c, const MatmulOptions& o = {}) const {
    check_matmul(o);
    if (a.rows > 0) local_->matmul(a, b, c, o);
  }

  // Sums x elementwise over the ranks, in place (collective): every rank passes a vector of the same length
  // and type (float, double, bfloat16, half) and every rank gets the same sum. x is a host span or vector,
  // or a Buffer of local(); the call returns when the result is there. With o.deterministic, element i is
  // ((x_0[i] + x_1[i]) + ...) + x_{P-1}[i] in rank order in the compute type, rounded once: the same bits
  // for any transport, NCCL algorithm, protocol, channel count and topology (types.hpp, AllReduceOptions).
  // NCCL ranks: an all-to-all of slices, each rank folding its slice, then an all-gather; plain:
  // ncclAllReduce. MPI ranks: the same steps through MPI (plain float / double: MPI_Allreduce).
  template <class T>
  requires is_floating_v<T>
  void all_reduce(std::span<T> x, const AllReduceOptions& o = {}) const {
    all_reduce_entry(dtype_of<T>, x.data(), nullptr, x.size(), o);
  }
  template <class T>
  requires is_floating_v<T>
  void all_reduce(std::vector<T>& x, const AllReduceOptions& o = {}) const { all_reduce(std::span<T>(x), o); }
  template <class T>
  requires is_floating_v<T>
  void all_reduce(const Buffer<T>& x, const AllReduceOptions& o = {}) const {
    all_reduce_entry(dtype_of<T>, nullptr, x.allocation().get(), x.size(), o);
  }

 private:
  Engine(MPI_Comm comm, Backend backend, EngineOptions options, bool backend_from_env);
  void all_reduce_entry(Dtype dtype, void* host, const detail::Allocation* buffer, std::size_t count,
                        const AllReduceOptions& o) const;
  void reduce_entry(Op op, const detail::ReduceInput& in, const ReduceOptions& opts, void* result) const;
  void check_matmul(const MatmulOptions& o) const;
  template <class R>
  R reduce_as(Op op, const detail::ReduceInput& in, const ReduceOptions& opts) const {
    R result{};
    reduce_entry(op, in, opts, &result);
    return result;
  }

  // Every rank's `bytes` from send into recv (size * bytes, rank order): NCCL when ranks_ is set, else MPI.
  void allgather(const void* send, void* recv, std::size_t bytes) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::optional<tandem::Engine> local_;             // set once every rank made its engine
  std::unique_ptr<detail::RankCollectives> ranks_;  // NCCL among CUDA ranks; null: MPI
  friend class detail::VectorReductions<Engine>;
};

}  // namespace tandem::mpi
