// tandem::mpi::Engine::all_reduce on the ranks of MPI_COMM_WORLD: every rank builds every rank's vector from
// one seed, so each can compute the expected sum itself. Deterministic: bit for bit the rank-order fold of
// the definition (API.md), written here from the docs (compute type, left to right, one rounding,
// canonical NaN), for vectors whose elements span many magnitudes (any other order gives other bits).
// Plain: within the rounding bound of the exact sum. Specials, every form (span, vector, Buffer), sizes
// that miss every slice, and calls that differ between ranks (an error on every rank).
#include <mpi.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tandem/mpi.hpp"
#include "tests/support.hpp"

namespace {

// Rank r's vector of n elements: values of magnitudes from 2^-20 to 2^20 (half: 2^-10 to 2^10) and both
// signs, so that the association order shows in the bits.
template <class T>
std::vector<T> rank_vector(std::size_t n, int r) {
  test::SplitMix64 g{n * 1000003 + std::uint64_t(r) * 7919 + 1};
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double mant = double(g.below(1u << 20)) / double(1u << 20) + 0.5;
    const int spread = std::is_same_v<T, tandem::half> ? 10 : 20;  // (half: sums stay finite and normal)
    const int exp = int(g.below(std::uint64_t(2 * spread + 1))) - spread;
    const double v = std::ldexp(mant, exp) * (g.below(2) ? -1.0 : 1.0);
    x[i] = T(static_cast<float>(v));
    if constexpr (std::is_same_v<T, double>) x[i] = v;
  }
  return x;
}

template <class T>
std::uint64_t bits_of(T v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

// The definition: (x_0 + x_1) + ... + x_{P-1} in the compute type, rounded once, NaN canonical.
template <class T>
std::vector<T> rank_order_sum(const std::vector<std::vector<T>>& all) {
  using V = tandem::compute_t<T>;
  std::vector<T> out(all.front().size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    V acc = V(all[0][i]);
    for (std::size_t r = 1; r < all.size(); ++r) acc = acc + V(all[r][i]);
    if (std::isnan(static_cast<double>(acc))) {
      if constexpr (std::is_same_v<T, float>)
        out[i] = std::bit_cast<float>(0x7FC00000u);
      else if constexpr (std::is_same_v<T, double>)
        out[i] = std::bit_cast<double>(0x7FF8000000000000ull);
      else
        out[i] = T::from_bits(std::is_same_v<T, tandem::bfloat16> ? 0x7FC0 : 0x7E00);
    } else {
      out[i] = T(acc);
    }
  }
  return out;
}

template <class T>
void check_type(const tandem::mpi::Engine& eng) {
  CAPTURE(std::string(test::type_name<T>()));
  const int size = eng.size(), rank = eng.rank();
  for (std::size_t n :
       {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(63), std::size_t(64), std::size_t(65),
        std::size_t(64 * size), std::size_t(64 * size + 1), std::size_t(4099), std::size_t(100003)}) {
    CAPTURE(n);
    std::vector<std::vector<T>> all;
    for (int r = 0; r < size; ++r) all.push_back(rank_vector<T>(n, r));
    const std::vector<T> want = rank_order_sum(all);
    // Deterministic: the definition's bits, in every form.
    std::vector<T> x = all[std::size_t(rank)];
    eng.all_reduce(x, {true});
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) differ += bits_of(x[i]) != bits_of(want[i]);
    CHECK(differ == 0);
    auto buf = eng.local().upload<T>(all[std::size_t(rank)]);
    eng.all_reduce(buf, {true});
    const std::vector<T> got = buf.to_vector();
    differ = 0;
    for (std::size_t i = 0; i < n; ++i) differ += bits_of(got[i]) != bits_of(want[i]);
    CHECK(differ == 0);
    // Plain: within the bound of the exact sum (P - 1 additions in the compute type, one rounding to T).
    for (bool on_buffer : {false, true}) {
      std::vector<T> y = all[std::size_t(rank)];
      if (on_buffer) {
        auto b = eng.local().upload<T>(y);
        eng.all_reduce(b);
        y = b.to_vector();
      } else {
        eng.all_reduce(std::span<T>(y));
      }
      const double eps = std::numeric_limits<tandem::compute_t<T>>::epsilon();
      const double unit = sizeof(T) == 2 ? (std::is_same_v<T, tandem::bfloat16> ? 0x1p-8 : 0x1p-11) : eps;
      std::size_t bad = 0;
      for (std::size_t i = 0; i < n; ++i) {
        long double exact = 0, magnitude = 0;
        for (int r = 0; r < size; ++r) exact += static_cast<double>(all[std::size_t(r)][i]);
        for (int r = 0; r < size; ++r) magnitude += std::fabs(static_cast<double>(all[std::size_t(r)][i]));
        const double bound = double(magnitude) * double(size) * (eps + unit) + 0x1p-24;
        bad += std::fabs(static_cast<double>(y[i]) - double(exact)) > bound;
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("mpi all_reduce: deterministic is the rank-order sum bit for bit; plain within its bound") {
  const tandem::mpi::Engine eng(MPI_COMM_WORLD);
  check_type<float>(eng);
  check_type<double>(eng);
  check_type<tandem::bfloat16>(eng);
  check_type<tandem::half>(eng);
}

TEST_CASE("mpi all_reduce: NaN, infinities and signed zeros") {
  const tandem::mpi::Engine eng(MPI_COMM_WORLD);
  const int size = eng.size(), rank = eng.rank();
  const float inf = std::numeric_limits<float>::infinity();
  // Element 0: a NaN (with a payload and the sign set) on the last rank; 1: +inf on rank 0, -inf on the
  // last (NaN when there are two ranks or more); 2: -0 everywhere; 3: -0 but +0 on the last rank (+0).
  std::vector<float> x = {1.0f, 0.0f, -0.0f, -0.0f};
  if (rank == size - 1) x[0] = std::bit_cast<float>(0xFFC01234u), x[1] = -inf, x[3] = 0.0f;
  if (rank == 0) x[1] = inf;
  eng.all_reduce(x, {true});
  CHECK(std::bit_cast<std::uint32_t>(x[0]) == 0x7FC00000u);
  if (size > 1) CHECK(std::bit_cast<std::uint32_t>(x[1]) == 0x7FC00000u);
  CHECK(std::bit_cast<std::uint32_t>(x[2]) == 0x80000000u);
  CHECK(std::bit_cast<std::uint32_t>(x[3]) == 0u);
}

TEST_CASE("mpi all_reduce: calls that differ between ranks throw on every rank") {
  const tandem::mpi::Engine eng(MPI_COMM_WORLD);
  std::vector<float> x(eng.rank() == 0 ? 10 : 11, 1.0f);
  if (eng.size() > 1) CHECK_THROWS_AS(eng.all_reduce(x), tandem::Error);
  std::vector<float> y(10, 1.0f);
  if (eng.size() > 1) CHECK_THROWS_AS(eng.all_reduce(y, {eng.rank() == 0}), tandem::Error);
  // A Buffer of another engine.
  const tandem::Engine other(tandem::Backend::cpu);
  auto b = other.upload(y);
  CHECK_THROWS_AS(eng.all_reduce(b), tandem::Error);
  // The engine still works after them.
  eng.all_reduce(y, {true});
  CHECK(y[0] == float(eng.size()));
}

}  // namespace
