// An engine over several devices (EngineOptions::devices, TANDEM_DEVICES): one single-device engine per
// device (its members, in list order) and the collectives between them (NCCL on CUDA). It is the
// executor (engine/executor.hpp) of a multi-device engine: the Engine's exported entries hand it every call.
//
// - Buffers are sharded: contiguous blocks, one per device, their boundaries on the canonical chunk
//   (4096 elements), so that each device's block is whole chunks of the global order.
// - Reductions split their input into parts (host inputs on chunk boundaries, Buffer views by shard),
//   reduce every part on its device at once (one host thread per part) and combine the parts' records in
//   order (engine/parts.hpp): deterministic sums are bitwise those of one engine.
// - Where the bits depend on the split (float sums and products outside deterministic mode), Buffers are
//   split by index instead (bounds_by_index: as the shards of a Buffer of exactly that operand would
//   split it; a part no shard holds whole is staged), so that the bits never depend on the address (on
//   GPUs in TANDEM_LAB_KERNELS builds only, until run there: split_by_index).
// - Matmul splits C and op(A) into row blocks (host: even blocks; Buffers: C's shards, or by index where
//   split_by_index()), every device
//   gets all of B (host: copied from the host over each device's link; Buffers: broadcast with NCCL from
//   the devices that hold it) and computes its rows.
// - Matmul of Buffers (not deterministic) sends B in panels on side streams beside the products
//   (matmul_panels); deterministic products broadcast B whole first, so that every element's bits stay.
// - Per-row reductions split the rows, batched matmul the batch entries (Buffers: those that start in each
//   member's shard); per-column reductions split the rows too, each member's partial results per column
//   combined as parts (engine/multi_device_per.cpp; on GPUs in TANDEM_LAB_KERNELS builds only, until run there).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/backend.hpp"
#include "engine/executor.hpp"
#include "tandem/engine.hpp"

namespace tandem::detail {

// The devices an engine runs on: EngineOptions::devices, or TANDEM_DEVICES (CUDA, with device -1); an
// empty list means one device (EngineOptions::device). Throws tandem::Error for a bad list or mix.
std::vector<int> resolve_devices(Backend backend, const EngineOptions& options);

// Units u = 0 .. count - 1 (rows, or batch entries) that start at element base + u * step of a sharded
// allocation of e-byte elements: bounds[d] .. bounds[d + 1] - 1 are those that start in member d's shard
// (so that a member's units are in place there, but for a last one that crosses into the next shard).
// Without an allocation (host memory) or with step 0: an even split.
std::vector<std::size_t> bounds_by_shard(const Allocation* a, std::size_t e, std::size_t base, std::size_t step,
                                         std::size_t count, std::size_t D);

// Units u = 0 .. count - 1, `step` elements apart, split where the shards of a Buffer of exactly
// count * step elements would split them (the units that start in each member's shard): a split by index
// alone, for results whose bits depend on it (float sums and products: never on where the data lies).
std::vector<std::size_t> bounds_by_index(std::size_t step, std::size_t count, std::size_t D);

// Elements from the first to the last of a (checked) matrix or batch.
std::size_t extent_of(const MatrixInput& v);

// Joins the side streams (Collectives::join_side) if a pipelined exchange unwinds on an error, so that the
// temporaries declared before it, which the side streams may still read or write, are freed after them.
struct JoinOnUnwind {
  Collectives& c;
  bool armed = true;
  ~JoinOnUnwind() {
    if (armed) try {
        c.join_side();
      } catch (...) {  // (the error being thrown says what went wrong)
      }
  }
};

class Group final : public Executor {
 public:
  Group(Backend backend, const std::vector<int>& devices);
  ~Group() override;

  const std::shared_ptr<BackendImpl>& first() const noexcept override { return members_.front().first(); }
  std::vector<DeviceInfo> devices() const override;

  bool owns(const Allocation& a) const noexcept override;
  void reduce(const ReduceCall& call, void* result) const override;
  void reduce_into(const ReduceCall& call, const OutSlot& out) const override;
  void reduce_per(const ReducePerCall& call) const override;
  void matmul(const MatmulCall& call) const override;
  std::shared_ptr<Allocation> allocate(std::size_t count, std::size_t element_size) const override;
  std::shared_ptr<Allocation> wrap(void* data, std::size_t count, std::size_t element_size) const override;
  void synchronize() const override;

 private:
  // Elements of a Buffer operand in one member's memory (see multi_device.cpp).
  struct Staged;
  // A part of a reduction's input: the device (member) that reduces it, the part as that member's
  // input, and the global index of its first element.
  struct Part {
    int member;
    ReduceInput in;
    std::uint64_t offset;
  };
  // Whether float sums and products of Buffers split by index (bounds_by_index), so that their bits never
  // depend on the address: on CPU stand-ins, and on GPUs in TANDEM_LAB_KERNELS builds until run there
  // (other GPU builds split by shard, in place, and those bits can change with the address).
  bool split_by_index() const noexcept;
  // Whether a reduction (op `local`, as the backends run it) splits by index: a Buffer's float sums and
  // products outside deterministic mode, where split_by_index().
  bool reduction_by_index(Op local, Dtype dtype, bool deterministic, bool in_buffer) const;
  // By shard (each part in place), or with `keep` by index: the host's parts, each staged into `keep` onto
  // one member unless a shard holds it (sums and products whose bits must not depend on the address).
  std::vector<Part> split(const ReduceInput& in, std::vector<Staged>* keep = nullptr) const;
  static bool whole_chunks(const ReduceInput& in, const std::vector<Part>& pieces);
  template <class T>
  compute_t<T> resident_deterministic_sum(Op local, const std::vector<Part>& pieces, std::uint64_t total) const;
  Staged stage(const Allocation* src, std::size_t first_byte, std::size_t bytes, int member) const;
  void write_back(const Staged& s) const;
  MatrixInput on_member(const MatrixInput& v, int member, std::vector<Staged>& keep) const;
  void reduce_rows(const ReducePerCall& call) const;
  // Per column: false when the call is not split (see multi_device_per.cpp).
  bool reduce_cols(const ReducePerCall& call) const;
  template <class T>
  void reduce_cols_as(const ReducePerCall& call, const std::vector<std::size_t>& rows, bool chunks) const;
  void matmul_rows(const MatmulCall& call) const;
  void matmul_batches(const MatmulCall& call) const;
  void matmul_panels(const MatmulCall& call, const std::vector<std::size_t>& rows, const std::vector<MatrixInput>& ad,
                     const std::vector<MatrixInput>& cd) const;

  std::vector<SingleDevice> members_;  // one per device, in list order
  std::unique_ptr<Collectives> collectives_;
  mutable std::mutex collective_mutex_;  // one Buffer matmul (NCCL group, staging copies) at a time
};

// Bytes [first, first + bytes) of a sharded allocation in one member's memory: in place when that
// member's shard holds them all, else copied from the shards into a new allocation of the member.
struct Group::Staged {
  const Allocation* source;
  std::size_t first, bytes;
  int member;
  std::shared_ptr<Allocation> copy;  // null: in place
  void* data;
  std::shared_ptr<Allocation> view;  // a non-owning Allocation of the member over data
};

}  // namespace tandem::detail
