// tandem::mpi::Engine on the ranks of MPI_COMM_WORLD (run under mpirun with 1, 2 and 3 ranks): every rank
// builds the same global data from one seed, takes its part of a split (even, uneven, with empty parts,
// everything on one rank) and checks every op and dtype against a single CPU engine over the whole data:
// min, max, argmin, argmax and integer sums bit for bit, deterministic float sums and means bit for bit
// (the canonical order across part boundaries), other float sums within the bound of the reference;
// strided views and Buffers; matmul by row blocks against the single engine; errors on every rank.
#include <mpi.h>

#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "tandem/mpi.hpp"
#include "tests/support.hpp"

using tandem::Op;

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// The part [first, first + count) of n elements each rank takes under split `kind`.
struct Part {
  std::size_t first, count;
};
Part part_of(std::size_t n, int kind, int rank, int size) {
  std::vector<std::size_t> counts(std::size_t(size), 0);
  if (kind == 0) {  // even
    for (int r = 0; r < size; ++r) counts[r] = n / size + (std::size_t(r) < n % size);
  } else if (kind == 1) {  // uneven, from a seed
    test::SplitMix64 g{n * 31 + 7};
    std::size_t left = n;
    for (int r = 0; r < size - 1; ++r) counts[r] = left ? g.below(left + 1) : 0, left -= counts[r];
    counts[size - 1] = left;
  } else if (kind == 2) {  // everything on the last rank (the others empty)
    counts[size - 1] = n;
  } else {  // rank 0 empty, the rest even
    for (int r = 1; r < size; ++r)
      counts[r] = n / std::max(1, size - 1) + (std::size_t(r - 1) < n % std::max(1, size - 1));
    if (size == 1) counts[0] = n;
  }
  const std::size_t first = std::accumulate(counts.begin(), counts.begin() + rank, std::size_t(0));
  return {first, counts[rank]};
}

template <class T>
test::Vector<T> global_data(std::size_t n, std::uint64_t seed) {
  test::SplitMix64 g{seed};
  if constexpr (tandem::is_storage_type_v<T>) {
    const auto f = test::random_vector<float>(n, g, test::Values::uniform);
    return test::Vector<T>(f.begin(), f.end());
  } else {
    return test::random_vector<T>(n, g, test::Values::uniform);
  }
}

template <class T>
void check_type(const tandem::mpi::Engine& eng, const tandem::Engine& single) {
  CAPTURE(std::string(test::type_name<T>()));
  const int rank = eng.rank(), size = eng.size();
  const std::size_t sizes[] = {0, 1, 2, 4095, 4096, 4097, 12289, 65537, 300001};
  for (std::size_t n : sizes)
    for (int kind = 0; kind < 5; ++kind) {  // the four splits, then the uneven one with a NaN in the data
      CAPTURE(n);
      CAPTURE(kind);
      test::Vector<T> all = global_data<T>(n, n + 1);
      if constexpr (tandem::is_floating_v<T>)
        if (kind == 4 && n > 0) all[n / 2] = T(std::numeric_limits<float>::quiet_NaN());
      const Part p = part_of(n, kind == 4 ? 1 : kind, rank, size);
      const std::span<const T> mine(all.data() + p.first, p.count);
      const std::span<const T> whole(all);
      using W = tandem::compute_t<T>;
      const test::Vector<W> wide(all.begin(), all.end());
      const test::ReduceReference<W> ref = test::reduce_reference(std::span<const W>(wide));
      // The same part as a strided host view, a Buffer, and a strided view of a Buffer at an offset.
      test::Vector<T> spread(2 * p.count + 1);
      for (std::size_t i = 0; i < p.count; ++i) spread[2 * i + 1] = mine[i];
      const tandem::StridedView<const T> sv{spread.data() + 1, p.count, 2};
      const auto buf = eng.local().upload<T>(mine);
      const auto sbuf = eng.local().upload<T>(spread);
      const tandem::BufferView<T> bv{&sbuf, 1, p.count, 2};
      // Every op of the table, every form, both modes: the bits of one engine over the whole data, but
      // for floating-point sums (and means) by default, whose order differs: within their bound.
      for (bool det : {false, true})
        test::for_each_op([&]<tandem::Op O>() {
          CAPTURE(std::string(tandem::to_string(O)));
          CAPTURE(det);
          const tandem::ReduceOptions o{"auto", det};
          if (n == 0 && tandem::info(O).empty == tandem::EmptyRule::error) {
            CHECK_THROWS_AS((void)eng.reduce<O>(mine, o), tandem::Error);
            return;
          }
          const auto want = single.reduce<O>(whole, o);
          const bool ordered =
              tandem::is_floating_v<T> && !det &&
              (tandem::info(O).result == tandem::ResultKind::sum || tandem::info(O).result == tandem::ResultKind::mean);
          auto check = [&](const auto& got) {
            if (ordered)
              CHECK(test::judge_op<O, T>(got, ref).ok);
            else
              CHECK(test::same_bits(got, want));
          };
          check(eng.reduce<O>(mine, o));
          check(eng.reduce<O>(sv, o));
          check(eng.reduce<O>(buf, o));
          check(eng.reduce<O>(bv, o));
        });
    }
}

TEST_CASE("mpi: every op and dtype over any split equals one engine over the whole data") {
  const tandem::mpi::Engine eng(MPI_COMM_WORLD);
  const tandem::Engine single(tandem::Backend::cpu);
  CHECK(eng.rank() == world_rank());
  CHECK(eng.size() == world_size());
  test::for_each_type([&]<class T>() { check_type<T>(eng, single); });
}

TEST_CASE("mpi: a sum of only -0.0 on some ranks, the others empty, is -0.0") {
  const tandem::mpi::Engine eng(MPI_COMM_WORLD);
  const std::vector<float> zeros(eng.rank() % 2 == 0 ? 5 : 0, -0.0f);
  CHECK(std::signbit(eng.sum(zeros)));
  CHECK(std::signbit(eng.sum(zeros, {"auto", true})));
}

TEST_CASE("mpi: matmul by row blocks equals one engine's product") {
  const tandem::mpi::Engine eng(MPI_COMM_WORLD);
  const tandem::Engine single(tandem::Backend::cpu);
  const std::size_t m = 37, k = 29, n = 19;
  const auto a = global_data<float>(m * k, 1), b = global_data<float>(k * n, 2);
  for (int kind = 0; kind < 4; ++kind) {
    const Part p = part_of(m, kind, eng.rank(), eng.size());
    for (bool det : {false, true}) {
      tandem::MatmulOptions o{"auto", det};
      o.alpha = 0.5;
      std::vector<float> want(m * n), c(p.count * n + 1);
      single.matmul<float>({a.data(), m, k, k}, {b.data(), k, n, n}, {want.data(), m, n, n}, o);
      eng.matmul<float>({a.data() + p.first * k, p.count, k, k}, {b.data(), k, n, n}, {c.data(), p.count, n, n}, o);
      for (std::size_t i = 0; i < p.count * n; ++i) {
        const float w = want[p.first * n + i];
        if (det)
          CHECK(test::same_bits(c[i], w));
        else
          CHECK(std::fabs(c[i] - w) <= 1e-5f * (std::fabs(w) + float(k)));
      }
    }
  }
  std::vector<float> c(1);
  tandem::MatmulOptions t;
  t.trans_a = true;
  CHECK_THROWS_AS(eng.matmul<float>({a.data(), 1, 1, 1}, {b.data(), 1, 1, 1}, {c.data(), 1, 1, 1}, t), tandem::Error);
}

TEST_CASE("mpi: an error on one rank is an error on every rank (no rank left waiting)") {
  const tandem::mpi::Engine eng(MPI_COMM_WORLD);
  const std::vector<float> x(10, 1.0f);
  // An unknown kernel: every rank's own check fails.
  CHECK_THROWS_AS((void)eng.sum(x, {"no_such_kernel"}), tandem::Error);
  // Null data with a count on rank 0 only: rank 0 throws its message, the others that a rank failed.
  const float* data = eng.rank() == 0 ? nullptr : x.data();
  CHECK_THROWS_AS((void)eng.max(std::span<const float>(data, 10)), tandem::Error);
  CHECK_THROWS_AS((void)eng.sum(std::span<const float>(data, 10), {"auto", true}), tandem::Error);
  // Null data on the last rank only.
  const float* last_null = eng.rank() == eng.size() - 1 ? nullptr : x.data();
  CHECK_THROWS_AS((void)eng.sum(tandem::StridedView<const float>{last_null, 10, 1}, {"auto", true}), tandem::Error);
  // Stride 0 on the last rank only is no error: its first element, read 10 times, is its part.
  std::vector<float> y(10, 5.0f);
  y[0] = 2.0f;
  const std::size_t stride = eng.rank() == eng.size() - 1 ? 0 : 1;
  CHECK(eng.sum(tandem::StridedView<const float>{y.data(), 10, stride}, {"auto", true}) ==
        47.0f * float(eng.size() - 1) + 20.0f);
  // A view past the end of its Buffer on rank 0 only.
  const auto buf = eng.local().upload<float>(x);
  const tandem::BufferView<float> past{&buf, eng.rank() == 0 ? 5u : 0u, 10, 1};
  CHECK_THROWS_AS((void)eng.sum(past, {"auto", true}), tandem::Error);
  CHECK_THROWS_AS((void)eng.argmin(past), tandem::Error);
  // Ranks that disagree on the call (here: the dtype) all throw instead of waiting.
  if (eng.size() > 1) {
    const std::vector<double> xd(10, 1.0);
    CHECK_THROWS_AS(eng.rank() == 0 ? (void)eng.sum(xd) : (void)eng.sum(x), tandem::Error);
  }
  // where / initial, which the ranks' engine does not take, on every rank or on rank 0 only.
  const bool keep[10] = {true, true, true, true, true, true, true, true, true, true};
  CHECK_THROWS_AS((void)eng.sum(x, {.where = keep}), tandem::Error);
  CHECK_THROWS_AS((void)eng.max(x, {.initial = eng.rank() == 0 ? std::optional<double>(1) : std::nullopt}),
                  tandem::Error);
  try {  // (an empty input with initial: the refusal of initial, not of the empty input)
    (void)eng.min(std::vector<float>{}, {.initial = 1});
    FAIL("no tandem::Error");
  } catch (const tandem::Error& e) {
    CHECK(e.argument() == tandem::Arg::initial);
  }
  // The engine still works after them.
  CHECK(eng.sum(x) == 10.0f * float(eng.size()));
}

TEST_CASE("mpi: CUDA ranks exchange through NCCL, CPU ranks through MPI; one device per rank") {
  const tandem::mpi::Engine eng(MPI_COMM_WORLD);
  [[maybe_unused]] const bool cuda = eng.local().backend() == tandem::Backend::cuda;
  // NCCL takes one rank per GPU: ranks of a node on the same GPU exchange through MPI.
  int device = eng.local().upload(std::vector<float>(1)).shards().at(0).device, shared = 0;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  std::vector<int> devices(static_cast<std::size_t>(node_size));
  MPI_Allgather(&device, 1, MPI_INT, devices.data(), 1, MPI_INT, node);
  MPI_Comm_free(&node);
  for (std::size_t i = 0; i < devices.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) shared |= devices[i] == devices[j];
  int any_shared = 0;
  MPI_Allreduce(&shared, &any_shared, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#ifdef TANDEM_TEST_HAS_NCCL
  const bool nccl = cuda && !any_shared;
#else
  const bool nccl = false;
#endif
  CHECK(std::string(eng.transport()) == (nccl ? "nccl" : "mpi"));
  tandem::EngineOptions two;
  two.devices = {0, 1};
  CHECK_THROWS_AS(tandem::mpi::Engine(MPI_COMM_WORLD, two), tandem::Error);
}

}  // namespace
