// tandem::mpi::Engine (include/tandem/mpi.hpp): each rank reduces its part with its own tandem::Engine,
// then the ranks exchange one small record each (MPI_Allgather) and every rank combines the records in
// rank order with the operators of common/reduce_ops.hpp, so that every rank holds the same
// bits. Deterministic float sums exchange canonical chunk values instead (see deterministic_sum).
// Errors are collective: a rank whose part fails validation throws its own message, and the others
// throw too (never a rank waiting forever in a collective the failing rank skipped).
#include "tandem/mpi.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/all_reduce.hpp"
#include "engine/extent.hpp"
#include "engine/parts.hpp"
#include "engine/registry.hpp"
#include "engine/results.hpp"

namespace tandem::mpi {
namespace {

namespace parts = detail::parts;

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(std::string("tandem::mpi: ") + what + " failed: " + std::string(text, std::size_t(len)));
}

void require_mpi() {  // (local: before any collective)
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw Error(
        "tandem::mpi::Engine needs MPI running: call MPI_Init before making it and MPI_Finalize after it is gone");
}

// This rank's rank among the ranks of its node (collective over comm).
int node_rank(MPI_Comm comm) {
  MPI_Comm node;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

// Whether two ranks of a node run on the same GPU (collective over comm): NCCL takes one rank per GPU.
bool ranks_share_a_gpu(MPI_Comm comm, int device) {
  MPI_Comm node;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int size = 0;
  MPI_Comm_size(node, &size);
  std::vector<int> devices(static_cast<std::size_t>(size));
  const int rc = MPI_Allgather(&device, 1, MPI_INT, devices.data(), 1, MPI_INT, node);
  MPI_Comm_free(&node);
  check(rc, "MPI_Allgather");
  std::sort(devices.begin(), devices.end());
  int mine = std::adjacent_find(devices.begin(), devices.end()) != devices.end(), any = 0;
  check(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  return any != 0;
}

// This rank's engine: a rank of a backend with a device per rank (CUDA; the registry's column) without a
// device named (EngineOptions::device, TANDEM_DEVICE) takes
// its rank on the node.
tandem::Engine make_local(int rank_on_node, Backend backend, EngineOptions options) {
  if (!options.devices.empty())
    throw Error(
        "tandem::mpi::Engine runs one device per rank; leave EngineOptions::devices empty (name the rank's "
        "GPU with EngineOptions::device or TANDEM_DEVICE, or let it take its rank on the node)");
  const char* device = std::getenv("TANDEM_DEVICE");
  if (detail::rank_columns(backend).device_per_rank && options.device < 0 && (device == nullptr || *device == 0))
    options.device = rank_on_node;
  return tandem::Engine(backend, options);
}

// Whether every rank passed the same values (collective): one MPI_MIN over the values and their
// complements gives the lowest and the highest of each.
bool same_on_every_rank(MPI_Comm comm, std::initializer_list<std::uint64_t> values) {
  std::vector<std::uint64_t> mine, low(2 * values.size());
  for (std::uint64_t v : values) mine.push_back(v), mine.push_back(~v);
  check(MPI_Allreduce(mine.data(), low.data(), int(mine.size()), MPI_UINT64_T, MPI_MIN, comm), "MPI_Allreduce");
  for (std::size_t i = 0; i < low.size(); i += 2)
    if (low[i] != ~low[i + 1]) return false;
  return true;
}

// Runs f on this rank; if any rank threw, every rank throws (the failing ones their own message).
template <class F>
void collectively(MPI_Comm comm, const char* call, F&& f) {
  std::exception_ptr own;  // a tandem::Error, rethrown as it is (its kind, argument and hint)
  std::string error;
  try {
    f();
  } catch (const Error&) {
    own = std::current_exception();
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = std::string("tandem::mpi: ") + call + ": an exception that is not a std::exception";
  }
  int failed = own || !error.empty(), any = 0;
  check(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  if (own) std::rethrow_exception(own);
  if (failed) throw Error(error);
  if (any) throw Error(std::string("tandem::mpi: ") + call + " failed on another rank (its error says why)");
}

}  // namespace

Engine::Engine(MPI_Comm comm, EngineOptions options) : Engine(comm, Backend::cpu, options, true) {}
Engine::Engine(MPI_Comm comm, Backend backend, EngineOptions options) : Engine(comm, backend, options, false) {}

// Collective: a rank that cannot make its engine (a bad TANDEM_BACKEND, a missing GPU) throws its own
// error, the others that a rank failed.
Engine::Engine(MPI_Comm comm, Backend backend, EngineOptions options, bool from_env) {
  require_mpi();
  check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  const int on_node = node_rank(comm_);
  try {
    collectively(comm_, "making tandem::mpi::Engine",
                 [&] { local_.emplace(make_local(on_node, from_env ? backend_from_env() : backend, options)); });
    // NCCL when every rank is a CUDA rank of its own GPU: rank 0 makes the unique id, MPI broadcasts it,
    // all join. (Ranks sharing a GPU, e.g. through TANDEM_DEVICE, exchange through MPI.)
    int grouped = detail::rank_columns(local_->backend()).rank_groups, all_grouped = 0;
    check(MPI_Allreduce(&grouped, &all_grouped, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce");
    if (all_grouped && ranks_share_a_gpu(comm_, local_->impl().device_index())) all_grouped = 0;
    std::vector<unsigned char> id;
    if (all_grouped)
      collectively(comm_, "ncclGetUniqueId", [&] {
        if (rank_ == 0) id = local_->impl().make_rank_group_id();
      });
    std::uint64_t length = id.size();
    check(MPI_Bcast(&length, 1, MPI_UINT64_T, 0, comm_), "MPI_Bcast");
    id.resize(length);
    if (length > 0) {
      check(MPI_Bcast(id.data(), int(length), MPI_BYTE, 0, comm_), "MPI_Bcast");
      collectively(comm_, "ncclCommInitRank", [&] { ranks_ = local_->impl().join_rank_group(id, rank_, size_); });
    }
  } catch (...) {
    ranks_.reset();
    MPI_Comm_free(&comm_);
    throw;
  }
}

void Engine::allgather(const void* send, void* recv, std::size_t bytes) const {
  if (ranks_) {
    collectively(comm_, "staging an NCCL allgather", [&] { ranks_->stage(send, bytes); });
    return ranks_->exchange(recv);
  }
  if (bytes > std::size_t(INT_MAX)) throw Error("tandem::mpi: an exchange of more than 2^31 bytes per rank");
  check(MPI_Allgather(send, int(bytes), MPI_BYTE, recv, int(bytes), MPI_BYTE, comm_), "MPI_Allgather");
}
Engine::~Engine() {
  ranks_.reset();  // (before the communicator: NCCL's goes first)
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

void Engine::check_matmul(const MatmulOptions& o) const {
  if (o.trans_a)
    throw Error(
        "tandem::mpi::Engine::matmul: each rank passes its rows of op(A), so trans_a is not taken; "
        "transpose A's rows on the rank or pass them as stored");
}

namespace {

// Deterministic float sum over the concatenated parts (engine/parts.hpp): every rank gathers every
// rank's chunk values and crossing-chunk pieces and sums them itself (total / 4096 values per rank).
template <class T, class Exchange>
compute_t<T> deterministic_sum(MPI_Comm comm, int size_, const parts::Chunks<T>& l, std::uint64_t total,
                               Exchange&& allgather) {
  using V = compute_t<T>;
  // meta[r] = {offset, head, whole, tail} of rank r.
  const std::uint64_t mine[4] = {l.offset, l.head, l.whole, l.tail};
  std::vector<std::uint64_t> meta(std::size_t(size_) * 4);
  check(MPI_Allgather(mine, 4, MPI_UINT64_T, meta.data(), 4, MPI_UINT64_T, comm), "MPI_Allgather");
  // Every rank sends the same number of values (the most any rank has), padded: one allgather.
  std::uint64_t most = 0;
  for (int r = 0; r < size_; ++r) most = std::max(most, meta[r * 4 + 1] + meta[r * 4 + 2] + meta[r * 4 + 3]);
  if (most > std::uint64_t(INT_MAX) / sizeof(V) / std::uint64_t(size_))
    throw Error("deterministic sum across MPI ranks: " + std::to_string(total) +
                " elements are more chunk values than one exchange moves; split the sum");
  std::vector<V> send(most), all(most * std::size_t(size_));
  std::copy(l.values.begin(), l.values.end(), send.begin());
  std::copy(l.pieces.begin(), l.pieces.end(), send.begin() + std::ptrdiff_t(l.whole));
  allgather(send.data(), all.data(), most * sizeof(V));
  std::vector<parts::Chunks<T>> every(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    parts::Chunks<T>& c = every[std::size_t(r)];
    c.op = l.op;
    c.offset = meta[r * 4], c.head = meta[r * 4 + 1], c.whole = meta[r * 4 + 2], c.tail = meta[r * 4 + 3];
    const auto from = all.begin() + std::ptrdiff_t(most * std::size_t(r));
    c.values.assign(from, from + std::ptrdiff_t(c.whole));
    c.pieces.assign(from + std::ptrdiff_t(c.whole), from + std::ptrdiff_t(c.whole + c.head + c.tail));
  }
  return parts::combine_chunks<T>(every, total);
}

}  // namespace

void Engine::reduce_entry(Op op, const detail::ReduceInput& in, const ReduceOptions& opts, void* result) const {
  const char* name = to_string(op);
  // Where this rank's part starts in the concatenated data, and the total.
  std::uint64_t count = in.count, offset = 0, total = 0;
  check(MPI_Exscan(&count, &offset, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Exscan");
  if (rank_ == 0) offset = 0;  // (MPI_Exscan leaves rank 0's undefined)
  check(MPI_Allreduce(&count, &total, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Allreduce");
  if (!detail::masked(opts)) detail::require_nonempty(op, total, name);  // (every rank's part is empty)

  const Op local_op = info(op).computed_as;
  // Every rank must make the same call: the same dtype, op and determinism (else the exchanges below
  // would not match up).
  if (!same_on_every_rank(comm_, {std::uint64_t(in.dtype) * 64 + std::uint64_t(op) * 2 + opts.deterministic}))
    throw Error(std::string(name) +
                ": the ranks made different calls (dtype, op or deterministic differ); every rank must make the "
                "same collective calls in the same order");
  alignas(16) unsigned char backend[detail::kBackendResultBytes] = {};  // the combined backend result
  detail::visit(in.dtype, [&]<class T>(std::type_identity<T>) {
    // Deterministic sums of floats: their own exchange (chunk values).
    if constexpr (is_floating_v<T>)
      if (parts::by_chunks(op, in.dtype, opts.deterministic)) {
        parts::Chunks<T> chunks;
        collectively(comm_, name, [&] {
          detail::refuse_masks(opts, "tandem::mpi::Engine");  // (every rank's error together)
          local_->check_reduce(local_op, in, opts);           // this rank's part, the kernel, the options
          chunks = parts::local_chunks<T>(local_op, local_->impl(), in, offset);
        });
        auto exchange = [this](const void* send, void* recv, std::size_t bytes) { allgather(send, recv, bytes); };
        const compute_t<T> sum = deterministic_sum<T>(comm_, size_, chunks, total, exchange);
        std::memcpy(backend, &sum, sizeof sum);
        return;
      }
    // This rank's record, then every rank's, combined in rank order: the same bits on every rank.
    parts::Record mine;
    collectively(comm_, name, [&] {
      detail::refuse_masks(opts, "tandem::mpi::Engine");
      local_->check_reduce(local_op, in, opts);  // this rank's part (empty or not), the kernel, the options
      mine = parts::record<T>(local_op, in, offset, [&](Op o, void* r) { local_->reduce_part_entry(o, in, opts, r); });
    });
    std::vector<parts::Record> all(static_cast<std::size_t>(size_));
    allgather(&mine, all.data(), sizeof mine);
    parts::combine<T>(op, all, backend);
  });
  detail::api_result(op, in.dtype, backend, total, result);
}

}  // namespace tandem::mpi

// ---- all_reduce ----------------------------------------------------------------------------------

namespace tandem::mpi {
namespace {

namespace ar = detail::all_reduce;

// The deterministic all-reduce through MPI (common/all_reduce.hpp), in segments of at most 2^30 bytes (MPI's
// int counts): an MPI_Alltoallv of the slices, this rank's fold, an MPI_Allgatherv of the folded slices.
template <class T>
void rank_ordered_sum(MPI_Comm comm, int rank, int size, T* x, std::size_t count) {
  const std::size_t segment = (std::size_t(1) << 30) / sizeof(T);  // (counts and displacements: < 2^31 bytes)
  const std::size_t e = sizeof(T), p = std::size_t(size);
  std::vector<int> send_counts(p), send_displs(p), recv_counts(p), recv_displs(p);
  std::vector<T> recv;
  for (std::size_t start = 0; start < count; start += segment) {
    const std::size_t n = std::min(segment, count - start);
    T* xs = x + start;
    const ar::Slices sl = ar::slices(n, size);
    const std::size_t mine = sl.count(rank);
    recv.resize(sl.per * p);
    for (int r = 0; r < size; ++r) {
      send_counts[std::size_t(r)] = int(sl.count(r) * e), send_displs[std::size_t(r)] = int(sl.first(r) * e);
      recv_counts[std::size_t(r)] = int(mine * e), recv_displs[std::size_t(r)] = int(std::size_t(r) * sl.per * e);
    }
    check(MPI_Alltoallv(xs, send_counts.data(), send_displs.data(), MPI_BYTE, recv.data(), recv_counts.data(),
                        recv_displs.data(), MPI_BYTE, comm),
          "MPI_Alltoallv");
    T* own = xs + sl.first(rank);
    for (std::size_t i = 0; i < mine; ++i)
      own[i] = ar::fold<T>(size, [&](int r) { return recv[std::size_t(r) * sl.per + i]; });
    check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, xs, send_counts.data(), send_displs.data(), MPI_BYTE, comm),
          "MPI_Allgatherv");
  }
}

// The plain sum through MPI: MPI_Allreduce for float and double, the rank-ordered sum for 16-bit types
// (MPI has no type for them).
template <class T>
void mpi_sum(MPI_Comm comm, int rank, int size, T* x, std::size_t count, bool deterministic) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (!deterministic) {
      const std::size_t segment = std::size_t(INT_MAX) / 2;
      for (std::size_t start = 0; start < count; start += segment)
        check(MPI_Allreduce(MPI_IN_PLACE, x + start, int(std::min(segment, count - start)),
                            std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE, MPI_SUM, comm),
              "MPI_Allreduce");
      return;
    }
  }
  rank_ordered_sum(comm, rank, size, x, count);
}

}  // namespace

void Engine::all_reduce_entry(Dtype dtype, void* host, const detail::Allocation* buffer, std::size_t count,
                              const AllReduceOptions& o) const {
  // Every rank must make the same call (else the exchanges would not match).
  if (!same_on_every_rank(comm_, {std::uint64_t(dtype) * 2 + std::uint64_t(o.deterministic), count}))
    throw Error(ErrorKind::value, Arg::none,
                Message("all_reduce: the ranks passed different calls (the element type, the length or "
                        "AllReduceOptions::deterministic differ)"),
                Message("every rank passes a vector of the same type and length, with the same options"));
  collectively(comm_, "all_reduce", [&] {
    if (buffer != nullptr && (&buffer->impl() != &local_->impl() || buffer->sharded()))
      throw Error(ErrorKind::value, Arg::none, Message("all_reduce: the Buffer is not one of this rank's engine"),
                  Message("make it with local() (upload or buffer)"));
    if (count > 0 && buffer == nullptr && host == nullptr)
      throw Error(ErrorKind::value, Arg::none, Message("all_reduce: the span is null but has ", count, " elements"),
                  Message("pass the vector's memory"));
  });
  if (count == 0 || (size_ == 1 && !o.deterministic)) return;  // (one rank, deterministic: NaN made canonical)
  if (ranks_) {
    // (a failure of this rank's earlier work, or of taking the memory, surfaces here on every rank, before
    // any of them enters NCCL)
    collectively(comm_, "all_reduce", [&] {
      local_->synchronize();
      ranks_->prepare_all_reduce(dtype, count, buffer != nullptr, o.deterministic);
    });
    return ranks_->all_reduce(dtype, buffer ? buffer->data() : host, count, buffer != nullptr, o.deterministic);
  }
  // MPI: host memory (a Buffer through a host copy).
  std::vector<unsigned char> copy;
  void* x = host;
  collectively(comm_, "all_reduce (copying the Buffer to the host)", [&] {
    if (buffer == nullptr) return;
    copy.resize(count * size_of(dtype));
    buffer->download(0, copy.data(), copy.size());
    x = copy.data();
  });
  detail::visit(dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (is_floating_v<T>) mpi_sum(comm_, rank_, size_, static_cast<T*>(x), count, o.deterministic);
  });
  if (buffer != nullptr) const_cast<detail::Allocation*>(buffer)->upload(0, copy.data(), copy.size());
}

}  // namespace tandem::mpi
