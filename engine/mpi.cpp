// tandem::mpi::Engine (include/tandem/mpi.hpp): each rank reduces its part with its own tandem::Engine,
// then the ranks exchange one small record each (MPI_Allgather) and every rank combines the records in
// rank order with the operators of backends/common/reduce_ops.hpp, so that every rank holds the same
// bits. Deterministic float sums exchange canonical chunk values instead (see deterministic_sum).
// Errors are collective: a rank whose part fails validation throws its own message, and the others
// throw too (never a rank waiting forever in a collective the failing rank skipped).
#include "tandem/mpi.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backends/common/canonical.hpp"
#include "backends/common/reduce_ops.hpp"
#include "engine/backend.hpp"
#include "engine/dispatch.hpp"

namespace tandem::mpi {
namespace {

using detail::Index;

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

Backend env_backend() {
  const char* v = std::getenv("TANDEM_BACKEND");
  try {
    return parse_backend(v ? v : "");
  } catch (const Error&) {
    throw Error("TANDEM_BACKEND='" + std::string(v) + "' is not a backend; use cpu, cuda or auto (or leave it unset)");
  }
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

// This rank's engine: a CUDA rank without a device named (EngineOptions::device, TANDEM_DEVICE) takes
// its rank on the node.
tandem::Engine make_local(int rank_on_node, Backend backend, EngineOptions options) {
  const char* device = std::getenv("TANDEM_DEVICE");
  if (backend == Backend::cuda && options.device < 0 && (device == nullptr || *device == 0))
    options.device = rank_on_node;
  return tandem::Engine(backend, options);
}

// One rank's contribution: whether it has one, the value's bytes (a sum, min or max in its result type,
// or an argmin / argmax element in the compute type) and the global index.
struct Record {
  std::int64_t has;
  std::int64_t index;
  unsigned char value[8];
};

// The address of element i of the input (host memory, or the backend's memory of a Buffer).
const void* element(const detail::ReduceInput& in, std::size_t i) {
  const std::size_t e = size_of(in.dtype);
  const auto* base = static_cast<const unsigned char*>(in.in_buffer ? in.allocation->data() : in.data);
  return base + (in.in_buffer ? in.offset * e : 0) + i * in.stride * e;
}

// Elements [first, first + len) of the input as the compute type, on the host. A Buffer's elements are
// downloaded in one copy when their extent is small, else one by one (len < 4096: chunk pieces only).
template <class T>
std::vector<compute_t<T>> fetch(const detail::ReduceInput& in, std::size_t first, std::size_t len) {
  std::vector<compute_t<T>> out(len);
  if (len == 0) return out;
  if (!in.in_buffer) {
    for (std::size_t i = 0; i < len; ++i) out[i] = compute_t<T>(*static_cast<const T*>(element(in, first + i)));
    return out;
  }
  const std::size_t e = sizeof(T), extent = (len - 1) * in.stride + 1;
  if (extent <= 4 * len + 4096) {
    std::vector<T> raw(extent);
    in.allocation->download((in.offset + first * in.stride) * e, raw.data(), extent * e);
    for (std::size_t i = 0; i < len; ++i) out[i] = compute_t<T>(raw[i * in.stride]);
  } else {
    for (std::size_t i = 0; i < len; ++i) {
      T v;
      in.allocation->download((in.offset + (first + i) * in.stride) * e, &v, e);
      out[i] = compute_t<T>(v);
    }
  }
  return out;
}

// Runs f on this rank; if any rank threw, every rank throws (the failing ones their own message).
template <class F>
void collectively(MPI_Comm comm, const char* call, F&& f) {
  std::string error;
  try {
    f();
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = std::string("tandem::mpi: ") + call + ": an exception that is not a std::exception";
  }
  int failed = !error.empty(), any = 0;
  check(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  if (failed) throw Error(error);
  if (any) throw Error(std::string("tandem::mpi: ") + call + " failed on another rank (its error says why)");
}

template <class V>
MPI_Datatype mpi_type() {
  return sizeof(V) == 4 ? MPI_FLOAT : MPI_DOUBLE;
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
                 [&] { local_.emplace(make_local(on_node, from_env ? env_backend() : backend, options)); });
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
}
Engine::~Engine() {
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

// Deterministic float sum over the concatenated parts, in the canonical order (canonical.hpp). Chunks
// are 4096 elements from global index 0. A rank computes the values of the chunks wholly inside its part
// with its backend (they continue the global order exactly); the pieces of chunks that cross a part's
// ends (its head, up to the first chunk boundary, and its tail, after the last whole chunk) go to every
// rank, which assembles those chunks and takes chunk_sum of them. Then every rank sums all chunk values
// (step 4) itself: total / 4096 values per rank.
template <class T>
struct LocalChunks {
  std::uint64_t head = 0, whole = 0, tail = 0;
  std::vector<compute_t<T>> values, pieces;  // whole chunks' values; head then tail elements
};

// This rank's share (runs inside collectively: a failure here reaches every rank).
template <class T>
LocalChunks<T> local_chunks(const tandem::Engine& local, const detail::ReduceInput& in, std::uint64_t offset) {
  const auto K = std::uint64_t(detail::canonical::kChunk);
  LocalChunks<T> l;
  const std::uint64_t n = in.count;
  l.head = std::min<std::uint64_t>(n, (K - offset % K) % K);
  l.whole = (n - l.head) / K, l.tail = n - l.head - l.whole * K;
  l.values.resize(l.whole);
  if (l.whole > 0)
    local.impl().canonical_chunk_values(in.dtype, element(in, l.head), std::int64_t(l.whole * K),
                                        std::int64_t(in.stride), in.in_buffer, l.values.data());
  l.pieces = fetch<T>(in, 0, l.head);
  const auto tail = fetch<T>(in, l.head + l.whole * K, l.tail);
  l.pieces.insert(l.pieces.end(), tail.begin(), tail.end());
  return l;
}

template <class T>
compute_t<T> deterministic_sum(MPI_Comm comm, int size, const LocalChunks<T>& l, std::uint64_t offset,
                               std::uint64_t total) {
  using V = compute_t<T>;
  const auto K = std::uint64_t(detail::canonical::kChunk);
  const std::uint64_t chunks = detail::canonical::chunk_count(std::int64_t(total));
  if (chunks > std::uint64_t(INT_MAX))  // MPI's int counts (the same on every rank: total is global)
    throw Error("deterministic sum across MPI ranks: " + std::to_string(total) +
                " elements are more chunk values than one MPI call moves; split the sum");
  // meta[r] = {offset, head, whole, tail} of rank r.
  const std::int64_t mine[4] = {std::int64_t(offset), std::int64_t(l.head), std::int64_t(l.whole),
                                std::int64_t(l.tail)};
  std::vector<std::int64_t> meta(std::size_t(size) * 4);
  check(MPI_Allgather(mine, 4, MPI_INT64_T, meta.data(), 4, MPI_INT64_T, comm), "MPI_Allgather");
  std::vector<int> value_counts(size), value_displs(size), piece_counts(size), piece_displs(size);
  for (int r = 0, vd = 0, pd = 0; r < size; ++r) {
    value_counts[r] = int(meta[r * 4 + 2]), piece_counts[r] = int(meta[r * 4 + 1] + meta[r * 4 + 3]);
    value_displs[r] = vd, piece_displs[r] = pd;
    vd += value_counts[r], pd += piece_counts[r];
  }
  std::vector<V> all_values(chunks), all_pieces(std::size_t(piece_displs.back() + piece_counts.back()));
  std::vector<V> gathered(std::size_t(value_displs.back() + value_counts.back()));
  check(MPI_Allgatherv(l.values.data(), int(l.whole), mpi_type<V>(), gathered.data(), value_counts.data(),
                       value_displs.data(), mpi_type<V>(), comm),
        "MPI_Allgatherv");
  check(MPI_Allgatherv(l.pieces.data(), int(l.pieces.size()), mpi_type<V>(), all_pieces.data(), piece_counts.data(),
                       piece_displs.data(), mpi_type<V>(), comm),
        "MPI_Allgatherv");
  // The chunks that cross part boundaries (at most two per rank), assembled from the pieces.
  std::map<std::uint64_t, std::vector<V>> crossing;
  auto place = [&](std::uint64_t global, const V* p, std::uint64_t len) {
    for (std::uint64_t i = 0; i < len; ++i) {
      const std::uint64_t g = global + i, c = g / K;
      std::vector<V>& chunk = crossing[c];
      if (chunk.empty()) chunk.resize(std::min<std::uint64_t>(K, total - c * K));
      chunk[g % K] = p[i];
    }
  };
  for (int r = 0; r < size; ++r) {
    const std::uint64_t o = meta[r * 4], h = meta[r * 4 + 1], w = meta[r * 4 + 2], t = meta[r * 4 + 3];
    const V* p = all_pieces.data() + piece_displs[r];
    place(o, p, h);
    place(o + h + w * K, p + h, t);
    std::copy_n(gathered.data() + value_displs[r], w, all_values.data() + (o + h) / K);
  }
  for (const auto& [c, chunk] : crossing)
    all_values[c] = detail::canonical::chunk_sum(chunk.data(), std::int64_t(chunk.size()), 1);
  return detail::canonical_nan(detail::canonical::sum_of_chunk_values(std::move(all_values)));
}

}  // namespace

void Engine::reduce(Op op, const detail::ReduceInput& in, const ReduceOptions& opts, void* result) const {
  const char* name = to_string(op);
  // Where this rank's part starts in the concatenated data, and the total.
  std::uint64_t count = in.count, offset = 0, total = 0;
  check(MPI_Exscan(&count, &offset, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Exscan");
  if (rank_ == 0) offset = 0;  // (MPI_Exscan leaves rank 0's undefined)
  check(MPI_Allreduce(&count, &total, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Allreduce");
  if (total == 0 && op != Op::sum)
    throw Error(std::string(name) + " of an empty input (every rank's part is empty) is undefined");

  const Op local_op = op == Op::mean ? Op::sum : op;
  // Every rank must make the same call: the same dtype, op and determinism (else the exchanges below
  // would not match up).
  // One MPI_MIN over (signature, -signature) gives the lowest and the highest signature.
  const int signature = int(in.dtype) * 64 + int(op) * 2 + int(opts.deterministic);
  const int mine_pair[2] = {signature, -signature};
  int lowest_pair[2] = {0, 0};
  check(MPI_Allreduce(mine_pair, lowest_pair, 2, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce");
  if (lowest_pair[0] != -lowest_pair[1])
    throw Error(std::string(name) +
                ": the ranks made different calls (dtype, op or deterministic differ); every rank must make the "
                "same collective calls in the same order");
  detail::visit(in.dtype, [&]<class T>(std::type_identity<T>) {
    using Sum = sum_result_t<T>;
    using V = compute_t<T>;
    // The global sum s as the caller's result: the sum, or mean's double(s) / total.
    auto write_sum = [&](Sum s) {
      if (op == Op::mean) {
        const double m = detail::canonical_nan(double(s) / double(total));
        std::memcpy(result, &m, sizeof m);
      } else {
        std::memcpy(result, &s, sizeof s);
      }
    };
    // Deterministic float sums: their own exchange (chunk values).
    if (local_op == Op::sum && opts.deterministic && is_floating_v<T>) {
      LocalChunks<T> chunks;
      collectively(comm_, name, [&] {
        local_->check_reduce(Op::sum, in, opts);  // this rank's part, the kernel, the options
        chunks = local_chunks<T>(*local_, in, offset);
      });
      return write_sum(deterministic_sum<T>(comm_, size_, chunks, offset, total));  // (floats: Sum is V)
    }
    // This rank's record.
    Record mine{in.count > 0, 0, {}};
    collectively(comm_, name, [&] {
      local_->check_reduce(local_op, in, opts);  // this rank's part (empty or not), the kernel, the options
      if (local_op == Op::sum) {
        Sum s{};
        local_->reduce(Op::sum, in, opts, &s);
        std::memcpy(mine.value, &s, sizeof s);
      } else if (in.count == 0) {
        // an empty part contributes nothing
      } else if (is_arg(local_op)) {
        std::size_t i = 0;
        local_->reduce(local_op, in, opts, &i);
        const V v = fetch<T>(in, i, 1)[0];  // the element itself, to compare across ranks
        mine.index = std::int64_t(offset + i);
        std::memcpy(mine.value, &v, sizeof v);
      } else {
        V v{};
        local_->reduce(local_op, in, opts, &v);
        std::memcpy(mine.value, &v, sizeof v);
      }
    });
    std::vector<Record> all(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&mine, int(sizeof mine), MPI_BYTE, all.data(), int(sizeof mine), MPI_BYTE, comm_),
          "MPI_Allgather");
    // Combined in rank order: the same operations, so the same bits, on every rank.
    detail::visit_op(local_op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = typename detail::OpFor<O, T>::type;
      if constexpr (O == Op::sum) {
        using Acc = typename detail::SumOp<Sum>::Acc;
        Acc acc = detail::SumOp<Sum>::identity();  // -0.0: a sum of only -0.0 stays -0.0
        bool any = false;
        for (const Record& r : all)
          if (r.has) {
            Sum s;
            std::memcpy(&s, r.value, sizeof s);
            acc = detail::SumOp<Sum>::combine(acc, Acc(s)), any = true;
          }
        write_sum(any ? detail::canonical_nan(Sum(acc)) : Sum{});  // empty: +0.0 / 0
      } else {
        typename Operator::Acc acc = Operator::identity();
        for (const Record& r : all) {
          if (!r.has) continue;
          V v;
          std::memcpy(&v, r.value, sizeof v);
          if constexpr (detail::is_arg_op<Operator>)
            acc = Operator::combine(acc, {v, r.index});
          else
            acc = Operator::combine(acc, v);
        }
        if constexpr (detail::is_arg_op<Operator>) {
          const std::size_t i = std::size_t(acc.index);
          std::memcpy(result, &i, sizeof i);
        } else {
          const V v = detail::canonical_nan(acc);
          std::memcpy(result, &v, sizeof v);
        }
      }
    });
  });
}

}  // namespace tandem::mpi
