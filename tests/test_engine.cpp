// The engine front end: backend selection, TANDEM_BACKEND and parse_backend, the dtype and op tables,
// kernel metadata (KernelInfo) and what the engine refuses by it, every validation error, and host
// ranges without a named element type.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <span>
#include <thread>
#include <type_traits>

#include "tests/support.hpp"

using tandem::Backend;
using tandem::Engine;

namespace {

using test::contains;
using test::message_of;

// Sets (or unsets, for nullptr) TANDEM_BACKEND for one scope and restores it afterwards.
struct ScopedEnv : test::ScopedVar {
  explicit ScopedEnv(const char* value) : test::ScopedVar("TANDEM_BACKEND", value) {}
};

std::vector<std::string> names_of(const std::vector<tandem::KernelInfo>& infos) {
  std::vector<std::string> names;
  for (const auto& k : infos) names.push_back(k.name);
  return names;
}

}  // namespace

TEST_CASE("TANDEM_BACKEND selects the backend" * doctest::test_suite("common")) {
  const Backend expected_auto = test::cuda_usable() ? Backend::cuda : Backend::cpu;
  {
    ScopedEnv env(nullptr);
    CHECK(Engine().backend() == expected_auto);
    CHECK(tandem::auto_backend().backend == expected_auto);
    CHECK_FALSE(tandem::auto_backend().reason.empty());
  }
  {
    ScopedEnv env("auto");
    CHECK(Engine().backend() == expected_auto);
  }
  {
    ScopedEnv env("cpu");
    CHECK(Engine().backend() == Backend::cpu);
  }
  {
    ScopedEnv env("cuda");
    if (test::cuda_usable()) {
      CHECK(Engine().backend() == Backend::cuda);
    } else {
      // No silent fallback: the message says what to do.
      auto msg = message_of([] { Engine e; });
      CHECK(contains(msg, "TANDEM_BACKEND=cpu"));
    }
  }
  for (const char* bad : {"gpu", "CPU", "cuda ", "x"}) {
    ScopedEnv env(bad);
    auto msg = message_of([] { Engine e; });
    CAPTURE(msg);
    CHECK(contains(msg, "TANDEM_BACKEND"));
    CHECK(contains(msg, std::string("'") + bad + "'"));
    std::string names;  // "cpu, cuda and auto": every backend of the table
    for (const tandem::BackendInfo& b : tandem::backends) names += std::string(b.name) + ", ";
    CHECK(contains(msg, names.substr(0, names.size() - 2) + " and auto"));
    CHECK(message_of([] { (void)tandem::backend_from_env(); }) == msg);
  }
  {
    ScopedEnv env("cpu");
    CHECK(tandem::backend_from_env() == Backend::cpu);
  }
}

TEST_CASE("Engine(Backend) and backend_status agree" * doctest::test_suite("common")) {
  CHECK(Engine(Backend::cpu).backend() == Backend::cpu);
  auto status = tandem::backend_status();
  REQUIRE(status.size() == std::size(tandem::backends));
  for (std::size_t i = 0; i < status.size(); ++i) CHECK(status[i].backend == tandem::backends[i].id);
  CHECK(status[0].usable);
  if (test::cuda_usable())
    CHECK(Engine(Backend::cuda).backend() == Backend::cuda);
  else
    CHECK_THROWS_AS(Engine{Backend::cuda}, tandem::Error);
  CHECK(Engine(Backend::cpu).device().compute_units >= 1);
}

TANDEM_BACKEND_TEST(kernel_lists, "kernel lists: the names of the kernel tables, auto first, every name runs") {
  const auto r = eng.reduce_kernels();
  const auto m = eng.matmul_kernels();
  // The names of the engine's tables, which are those of the backend's tables read without a device.
  CHECK(r == names_of(eng.reduce_kernel_info()));
  CHECK(m == names_of(eng.matmul_kernel_info()));
  CHECK(r == names_of(tandem::reduce_kernel_info(eng.backend())));
  CHECK(m == names_of(tandem::matmul_kernel_info(eng.backend())));
  REQUIRE(r.size() >= 2);
  REQUIRE(m.size() >= 2);
  CHECK(r[0] == "auto");
  CHECK(m[0] == "auto");
  CHECK(std::set<std::string>(r.begin(), r.end()).size() == r.size());
  CHECK(std::set<std::string>(m.begin(), m.end()).size() == m.size());
  // Every name runs (or, where its KernelInfo says it does not run here, is refused naming its requirement):
  // a reduction of its first element type by sum (else its first op), a product of its first type.
  for (const tandem::KernelInfo& k : eng.reduce_kernel_info()) {
    CAPTURE(k.name);
    REQUIRE_FALSE(k.dtypes.empty());
    REQUIRE_FALSE(k.ops.empty());
    const tandem::Op op = k.accepts(tandem::Op::sum) ? tandem::Op::sum : k.ops.front();
    test::with_dtype(k.dtypes.front(), [&]<class T>() {
      tandem::visit_op(op, [&]<tandem::Op O>(std::integral_constant<tandem::Op, O>) {
        using C = tandem::compute_t<T>;
        const test::Vector<T> x = {T(3), T(-1), T(2)};
        const auto ref = test::reduce_reference<C>(test::Vector<C>{C(3), C(-1), C(2)});
        tandem::op_result_t<O, T> got{};
        if (test::run_kernel(k, [&] { got = eng.reduce<O>(std::span<const T>(x), {k.name}); }))
          CHECK(test::judge_op<O, T>(got, ref, true).ok);
      });
    });
  }
  for (const tandem::KernelInfo& k : eng.matmul_kernel_info()) {
    CAPTURE(k.name);
    REQUIRE_FALSE(k.dtypes.empty());
    test::with_dtype(k.dtypes.front(), [&]<class T>() {
      if constexpr (tandem::is_matmul_type_v<T>) {
        using C = tandem::compute_t<T>;  // (16-bit inputs give float C)
        const test::Vector<T> a = {T(1), T(2), T(3), T(4)}, b = {T(1), T(0), T(0), T(1)};
        test::Vector<C> c(4, C(-7));
        if (test::run_kernel(k, [&] {
              eng.matmul<T>({a.data(), 2, 2, 2}, {b.data(), 2, 2, 2}, {c.data(), 2, 2, 2}, {k.name});
            }))
          CHECK(c == test::Vector<C>{1, 2, 3, 4});  // A * I, exact in every precision
      } else {
        FAIL(k.name << " lists " << test::type_name<T>() << ", not a matmul type");
      }
    });
  }
}

TANDEM_BACKEND_TEST(reduce_errors, "reduce: every invalid input throws tandem::Error") {
  std::vector<float> x = {1, 2, 3};
  auto msg = message_of([&] { eng.sum<float>(x, {"no_such_kernel"}); });
  CHECK(contains(msg, "no_such_kernel"));
  CHECK(contains(msg, eng.reduce_kernels()[1]));  // lists the valid names
  const std::vector<std::string> reduce_names = eng.reduce_kernels();
  for (const std::string& name : eng.matmul_kernels())  // a matmul kernel's name is no reduce kernel's
    if (std::count(reduce_names.begin(), reduce_names.end(), name) == 0)
      CHECK(contains(message_of([&] { eng.min<float>(x, {name}); }), name));
  // A kernel of another backend (where that backend's tables can be read here): the error names whose it is.
  for (const tandem::BackendInfo& b : tandem::backends) {
    std::vector<tandem::KernelInfo> other;
    try {
      if (b.id != eng.backend()) other = tandem::reduce_kernel_info(b.id);
    } catch (const tandem::Error&) {
    }
    for (const tandem::KernelInfo& k : other)
      if (std::count(reduce_names.begin(), reduce_names.end(), k.name) == 0)
        CHECK(contains(message_of([&] { eng.sum<float>(x, {k.name}); }), std::string("kernel of the ") + b.label));
  }
  CHECK(eng.sum(std::span<const float>()) == 0.0f);
  CHECK(eng.sum(std::span<const std::int32_t>()) == 0);
  CHECK(contains(message_of([&] { eng.min(std::span<const float>()); }), "empty"));
  CHECK_THROWS_AS(eng.max(std::span<const double>()), tandem::Error);
  CHECK_THROWS_AS(eng.mean(std::span<const std::int64_t>()), tandem::Error);
  CHECK(contains(message_of([&] { eng.sum(tandem::StridedView<float>{nullptr, 3, 1}); }), "null"));
  // Stride 0 (a broadcast) reads x[0] three times; ld 0 repeats the first row; an output stays refused
  // where it would overlap, and ld 0 is no matmul operand.
  CHECK(eng.sum(tandem::StridedView<float>{x.data(), 3, 0}) == 3 * x[0]);
  CHECK(eng.argmax(eng.upload<float>(x).view(1, 4, 0)) == 0);
  std::vector<float> per_column(2);
  eng.sum(tandem::MatrixView<const float>{x.data(), 3, 2, 0}, tandem::Per::col, std::span(per_column));
  CHECK((per_column[0] == 3 * x[0] && per_column[1] == 3 * x[1]));
  std::vector<float> c(4);
  CHECK(contains(message_of([&] {
                   eng.matmul<float>({x.data(), 2, 2, 0}, {x.data(), 2, 2, 2}, {c.data(), 2, 2, 2});
                 }),
                 "ld (0) is smaller than cols"));
  CHECK_THROWS_AS(eng.sum(tandem::StridedView<float>{x.data(), SIZE_MAX / 2, 4}), tandem::Error);
  auto buf = eng.upload<float>(x);
  CHECK(contains(message_of([&] { eng.sum(buf.view(1, 3, 1)); }), "past the buffer"));
  CHECK_THROWS_AS(eng.sum(buf.view(0, 2, 3)), tandem::Error);
  CHECK(eng.sum(buf.view(0, 2, 2)) == 4.0f);
  Engine other(Backend::cpu);
  auto foreign = other.upload<float>(x);
  CHECK(contains(message_of([&] { eng.sum(foreign); }), "another engine"));
  CHECK_THROWS_AS(eng.buffer<double>(SIZE_MAX / 4), tandem::Error);
}

TANDEM_BACKEND_TEST(matmul_errors, "matmul: every invalid input throws tandem::Error") {
  std::vector<float> a(12, 1), b(12, 1), c(16, 0);
  using V = tandem::MatrixView<const float>;
  using M = tandem::MatrixView<float>;
  // Shapes.
  CHECK(contains(message_of([&] {
                   eng.matmul<float>(V{a.data(), 3, 4, 4}, V{b.data(), 3, 4, 4}, M{c.data(), 3, 4, 4});
                 }),
                 "shapes do not match"));
  CHECK_THROWS_AS(eng.matmul<float>(V{a.data(), 3, 4, 4}, V{b.data(), 4, 3, 3}, M{c.data(), 3, 4, 4}), tandem::Error);
  // ld < cols.
  CHECK(contains(message_of([&] {
                   eng.matmul<float>(V{a.data(), 3, 4, 3}, V{b.data(), 4, 3, 3}, M{c.data(), 3, 3, 3});
                 }),
                 "ld"));
  CHECK_THROWS_AS(eng.matmul<float>(V{a.data(), 3, 4, 4}, V{b.data(), 4, 3, 3}, M{c.data(), 3, 3, 2}), tandem::Error);
  // A matrix wider than the address space (found by fuzz/fuzz_api: the extent check wrapped around).
  CHECK_THROWS_AS(eng.matmul<float>(V{a.data(), 1, 0, 0}, V{b.data(), 0, std::size_t(1) << 62, std::size_t(1) << 62},
                                    M{c.data(), 1, std::size_t(1) << 62, std::size_t(1) << 62}),
                  tandem::Error);
  // Null data.
  CHECK(contains(message_of([&] {
                   eng.matmul<float>(V{nullptr, 3, 4, 4}, V{b.data(), 4, 3, 3}, M{c.data(), 3, 3, 3});
                 }),
                 "null"));
  // Overlap of C with A or B, including partial overlap.
  CHECK(contains(message_of([&] {
                   eng.matmul<float>(V{a.data(), 2, 2, 2}, V{b.data(), 2, 2, 2}, M{a.data() + 3, 2, 2, 2});
                 }),
                 "overlaps"));
  CHECK_THROWS_AS(eng.matmul<float>(V{a.data(), 2, 2, 2}, V{c.data(), 2, 2, 2}, M{c.data(), 2, 2, 2}), tandem::Error);
  // Unknown kernel.
  CHECK(contains(message_of([&] {
                   eng.matmul<float>(V{a.data(), 2, 2, 2}, V{b.data(), 2, 2, 2}, M{c.data(), 2, 2, 2}, {"fast"});
                 }),
                 "'fast'"));
  // Buffer matrices that reach past their buffer.
  auto ab = eng.upload<float>(a);
  auto bb = eng.upload<float>(b);
  auto cb = eng.buffer<float>(4);
  CHECK_THROWS_AS(eng.matmul(ab.matrix(3, 4), bb.matrix(4, 3), cb.matrix(3, 3)), tandem::Error);
  CHECK_THROWS_AS(eng.matmul(ab.matrix(2, 2), bb.matrix(2, 2), ab.matrix(2, 2, 2, 1)), tandem::Error);
  eng.matmul(ab.matrix(2, 2), bb.matrix(2, 2), cb.matrix(2, 2));
  CHECK(cb.to_vector() == std::vector<float>{2, 2, 2, 2});
}

TANDEM_BACKEND_TEST(one_engine_many_threads, "one engine used from 8 threads at once with mixed ops") {
  // Each thread runs its own mix of reductions and products on its own data and checks every result
  // against plain loops; exact data (small integers) makes every correct result exact.
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      test::SplitMix64 g{std::uint64_t(1000 + t)};
      const auto d = [](test::SplitMix64& r) { return int(r.below(17)) - 8; };
      for (int it = 0; it < 25; ++it) {
        const std::size_t n = 1 + g.below(200000);
        std::vector<float> x(n);
        std::int64_t expect = 0;
        int mx = -100;
        for (auto& v : x) {
          int i = d(g);
          v = float(i);
          expect += i;
          mx = std::max(mx, i);
        }
        const auto& kernels = eng.reduce_kernels();
        const tandem::ReduceOptions o{kernels[g.below(kernels.size())]};
        if (eng.sum<float>(x, o) != float(expect)) ++failures;
        if (eng.max<float>(x, o) != float(mx)) ++failures;
        // 3x3 product of small integers: exact in float.
        std::vector<float> a(9), b(9), c(9);
        for (auto& v : a) v = float(d(g));
        for (auto& v : b) v = float(d(g));
        eng.matmul<float>({a.data(), 3, 3, 3}, {b.data(), 3, 3, 3}, {c.data(), 3, 3, 3});
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) {
            float r = 0;
            for (int p = 0; p < 3; ++p) r += a[i * 3 + p] * b[p * 3 + j];
            if (c[i * 3 + j] != r) ++failures;
          }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
}

// CUDA only: a host allocation of any size may succeed on a machine that overcommits memory (it did on
// the GPU machine), so the CPU backend cannot be made to fail this way.
TEST_CASE("cuda: out of memory throws tandem::Error and the engine stays usable" * doctest::test_suite("cuda") *
          doctest::skip(!test::cuda_usable())) {
  const Engine eng(Backend::cuda);
  // 2^44 floats = 64 TiB: more than any GPU has.
  const auto msg = message_of([&] { auto b = eng.buffer<float>(std::size_t(1) << 44); });
  CAPTURE(msg);
  CHECK(contains(msg, "out of"));
  std::vector<float> x(1000, 0.5f);
  CHECK(eng.sum<float>(x) == 500.0f);
  auto b = eng.upload<float>(x);
  CHECK(eng.max(b) == 0.5f);
}

// ---- The public tables: backends, dtypes, ops, precisions ----------------------------------------------

TEST_CASE("parse_backend: every backend's name, auto, and errors naming the valid values" *
          doctest::test_suite("common")) {
  for (Backend b : tandem::all_backends) {
    const std::string name = tandem::to_string(b);
    CAPTURE(name);
    CHECK(tandem::parse_backend(tandem::to_string(b)) == b);
  }
  CHECK(std::string(tandem::to_string(Backend::cpu)) == "cpu");
  CHECK(std::string(tandem::to_string(Backend::cuda)) == "cuda");
  CHECK(tandem::parse_backend("cpu") == Backend::cpu);
  CHECK(tandem::parse_backend("cuda") == Backend::cuda);  // a name, whether or not this machine runs it
  const Backend expected_auto = test::cuda_usable() ? Backend::cuda : Backend::cpu;
  CHECK(tandem::parse_backend("auto") == expected_auto);
  CHECK(tandem::parse_backend("") == expected_auto);
  CHECK(tandem::parse_backend("auto") == tandem::auto_backend().backend);
  for (const char* bad : {"gpu", "CPU", "Auto", " cpu", "cuda ", "cpu,cuda", "x"}) {
    const std::string bad_value = bad;
    CAPTURE(bad_value);
    CHECK_THROWS_AS(tandem::parse_backend(bad), tandem::Error);
    const std::string msg = message_of([&] { tandem::parse_backend(bad); });
    CAPTURE(msg);
    CHECK(contains(msg, std::string("'") + bad + "'"));
    for (Backend b : tandem::all_backends) CHECK(contains(msg, tandem::to_string(b)));
    CHECK(contains(msg, "auto"));
  }
}

namespace {
template <class T>
void check_dtype_row(tandem::Dtype id, const char* name, bool integer, bool matmul) {
  const std::string dtype_name = name;
  CAPTURE(dtype_name);
  const tandem::DtypeInfo& d = tandem::info(id);
  CHECK(tandem::dtype_of<T> == id);
  CHECK(tandem::dtype_of<const T> == id);
  CHECK(std::string(tandem::dtype_traits<T>::name) == name);
  CHECK(std::string(tandem::to_string(id)) == name);
  CHECK(std::string(test::type_name<T>()) == name);
  CHECK(d.id == id);
  CHECK(d.size == sizeof(T));
  CHECK(tandem::size_of(id) == sizeof(T));
  CHECK(d.integer == integer);
  CHECK(d.matmul == matmul);
  CHECK(tandem::is_matmul_type_v<T> == matmul);
  CHECK(tandem::is_reduce_type_v<T>);
  // Integer sums are int64, uint64 for unsigned integers (wrapping); float sums are the type itself; 16-bit
  // sums (and min / max) float.
  using Int = std::conditional_t<std::is_unsigned_v<T>, std::uint64_t, std::int64_t>;
  using Sum =
      std::conditional_t<std::is_integral_v<T>, Int, std::conditional_t<tandem::is_storage_type_v<T>, float, T>>;
  CHECK(d.is_unsigned == std::is_unsigned_v<T>);
  CHECK(std::is_same_v<tandem::compute_t<T>, std::conditional_t<tandem::is_storage_type_v<T>, float, T>>);
  CHECK(d.storage == tandem::is_storage_type_v<T>);
  CHECK(std::is_same_v<tandem::sum_result_t<T>, Sum>);
  CHECK(d.sum_result == tandem::dtype_of<Sum>);
  CHECK(tandem::parse_dtype(name) == id);
  // with_dtype calls the template of the type the Dtype names.
  CHECK(test::with_dtype(
      id, []<class U>() { return sizeof(U) == sizeof(T) && tandem::dtype_of<U> == tandem::dtype_of<T>; }));
}
}  // namespace

TEST_CASE("dtype table: names, sizes, parse_dtype round trip, sum result types" * doctest::test_suite("common")) {
  REQUIRE(tandem::dtypes.size() >= 6);  // the contract's six, then every row of the table
  check_dtype_row<std::int32_t>(tandem::Dtype::i32, "int32", true, false);
  check_dtype_row<std::int64_t>(tandem::Dtype::i64, "int64", true, false);
  check_dtype_row<float>(tandem::Dtype::f32, "float", false, true);
  check_dtype_row<double>(tandem::Dtype::f64, "double", false, true);
  check_dtype_row<tandem::bfloat16>(tandem::Dtype::bf16, "bfloat16", false, true);
  check_dtype_row<tandem::half>(tandem::Dtype::f16, "float16", false, true);
  // NumPy's narrow and unsigned integers: sums of signed ones as int64, of unsigned ones as uint64.
  check_dtype_row<std::int8_t>(tandem::Dtype::i8, "int8", true, false);
  check_dtype_row<std::int16_t>(tandem::Dtype::i16, "int16", true, false);
  check_dtype_row<std::uint8_t>(tandem::Dtype::u8, "uint8", true, false);
  check_dtype_row<std::uint16_t>(tandem::Dtype::u16, "uint16", true, false);
  check_dtype_row<std::uint32_t>(tandem::Dtype::u32, "uint32", true, false);
  check_dtype_row<std::uint64_t>(tandem::Dtype::u64, "uint64", true, false);
  static_assert(std::is_same_v<tandem::sum_result_t<std::int8_t>, std::int64_t>);
  static_assert(std::is_same_v<tandem::sum_result_t<std::uint8_t>, std::uint64_t>);
  static_assert(std::is_same_v<tandem::sum_result_t<std::uint64_t>, std::uint64_t>);
  for (std::size_t i = 0; i < tandem::dtypes.size(); ++i) {
    const tandem::DtypeInfo& d = tandem::dtypes[i];
    CHECK(static_cast<std::size_t>(d.id) == i);  // indexed by Dtype
    CHECK(tandem::parse_dtype(tandem::to_string(d.id)) == d.id);
  }
  for (const char* bad : {"", "Float", "float32", "int", "half", "bf16", "double ", "uint128", "bool_", "Bool"}) {
    const std::string bad_value = bad;
    CAPTURE(bad_value);
    CHECK_FALSE(tandem::parse_dtype(bad).has_value());
  }
  CHECK(std::string(tandem::to_string(static_cast<tandem::Dtype>(200))) == "unknown dtype");
  CHECK(tandem::is_reduce_type_v<std::uint32_t>);
  CHECK(tandem::is_reduce_type_v<bool>);
  CHECK_FALSE(tandem::is_matmul_type_v<bool>);
  static_assert(std::is_same_v<tandem::sum_result_t<bool>, std::int64_t>);  // NumPy's count of a mask
  static_assert(std::is_same_v<tandem::compute_t<bool>, bool>);
  CHECK(tandem::info(tandem::Dtype::b8).boolean);
  CHECK_FALSE(tandem::info(tandem::Dtype::b8).is_unsigned);
  CHECK_FALSE(tandem::is_reduce_type_v<char>);
  CHECK_FALSE(tandem::is_matmul_type_v<std::int32_t>);
}

TEST_CASE("Op and Precision names: to_string and parse_op" * doctest::test_suite("common")) {
  // The names programs outside the library use (a contract), then every row of the op table.
  const std::vector<std::pair<tandem::Op, std::string>> ops = {
      {tandem::Op::sum, "sum"},   {tandem::Op::min, "min"},       {tandem::Op::max, "max"},
      {tandem::Op::mean, "mean"}, {tandem::Op::argmin, "argmin"}, {tandem::Op::argmax, "argmax"}};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    CAPTURE(ops[i].second);
    CHECK(tandem::all_ops[i] == ops[i].first);
    CHECK(tandem::to_string(ops[i].first) == ops[i].second);
    CHECK(tandem::parse_op(ops[i].second) == ops[i].first);
  }
  std::set<std::string> names;
  for (tandem::Op op : tandem::all_ops) {
    const std::string name = tandem::to_string(op);
    CAPTURE(name);
    CHECK(tandem::parse_op(name) == op);
    CHECK(names.insert(name).second);  // one spelling per op
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz") == std::string::npos);
    CHECK(tandem::info(op).id == op);
    CHECK(tandem::is_backend_op(tandem::info(op).computed_as));
  }
  for (const char* bad : {"", "Sum", "avg", "minimum", "sum "}) {
    const std::string bad_value = bad;
    CAPTURE(bad_value);
    CHECK_FALSE(tandem::parse_op(bad).has_value());
  }
  CHECK(std::string(tandem::to_string(tandem::Precision::full)) == "full");
  CHECK(std::string(tandem::to_string(tandem::Precision::tf32)) == "tf32");
  CHECK(std::string(tandem::to_string(tandem::Precision::bf16)) == "bf16");
  // The bound's input rounding follows the precision, not a name.
  CHECK(test::input_rounding(tandem::Precision::full) == 0);
  CHECK(test::input_rounding(tandem::Precision::tf32) == std::ldexp(1.0L, -9));
  CHECK(test::input_rounding(tandem::Precision::bf16) == std::ldexp(1.0L, -6));
}

TEST_CASE("KernelInfo::accepts lists exactly its dtypes and ops" * doctest::test_suite("common")) {
  const tandem::KernelInfo k{.name = "x", .dtypes = {tandem::Dtype::f32}, .ops = {tandem::Op::min, tandem::Op::max}};
  CHECK(k.accepts(tandem::Dtype::f32));
  CHECK_FALSE(k.accepts(tandem::Dtype::f64));
  CHECK_FALSE(k.accepts(tandem::Dtype::i32));
  CHECK(k.accepts(tandem::Op::min));
  CHECK(k.accepts(tandem::Op::max));
  CHECK_FALSE(k.accepts(tandem::Op::sum));
  CHECK_FALSE(tandem::KernelInfo{}.accepts(tandem::Dtype::f32));
  const std::vector<tandem::KernelInfo> infos = {k};
  CHECK(test::find_kernel(infos, "x") == &infos[0]);
  CHECK(test::find_kernel(infos, "y") == nullptr);
  const tandem::Op min = tandem::Op::min, sum = tandem::Op::sum;
  CHECK(test::kernel_accepts(infos, "x", tandem::Dtype::f32, &min, false));
  CHECK_FALSE(test::kernel_accepts(infos, "x", tandem::Dtype::f32, &sum, false));
  CHECK_FALSE(test::kernel_accepts(infos, "x", tandem::Dtype::f32, &min, true));  // not deterministic
  CHECK_FALSE(test::kernel_accepts(infos, "y", tandem::Dtype::f32, &min, false));
  CHECK(test::kernel_json(k, "reduce", "cpu") ==
        R"({"backend":"cpu","kind":"reduce","name":"x","dtypes":["float"],"ops":["min","max"],"precision":"full",)"
        R"("precisions":{"float":"full"},"deterministic":false,"determinism":"not_guaranteed","auto_pick":false,)"
        R"("baseline":false,"requirement":"","per_row_col":false,"runs_here":true,"native_16bit":false})");
}

// ---- KernelInfo of each engine, and what the engine refuses by it ------------------------------------

namespace {

// Every kernel x dtype x op: the engine runs what the KernelInfo lists (and gets it right) and throws
// tandem::Error, naming the dtype or op, for the rest.
template <class T>
void check_reduce_refusals(const Engine& eng) {
  const test::Vector<T> x = {T(3), T(-1), T(2)};
  using C = tandem::compute_t<T>;
  const test::ReduceReference<C> ref = test::reduce_reference<C>(test::Vector<C>{C(3), C(-1), C(2)});
  for (const tandem::KernelInfo& k : eng.reduce_kernel_info()) {
    CAPTURE(k.name);
    const std::string dtype = tandem::to_string(tandem::dtype_of<T>);
    CAPTURE(dtype);
    test::for_each_op([&]<tandem::Op O>() {
      const std::string op_name = tandem::to_string(O);
      CAPTURE(op_name);
      const tandem::ReduceOptions o{k.name};
      const auto run = [&] { return eng.reduce<O>(std::span<const T>(x), o); };
      if (k.accepts(tandem::dtype_of<T>) && k.accepts(O)) {
        tandem::op_result_t<O, T> got{};
        if (test::run_kernel(k, [&] { got = run(); })) CHECK(test::judge_op<O, T>(got, ref, true).ok);
      } else {
        const std::string msg = message_of(run);
        CHECK(contains(msg, k.name));
        CHECK((contains(msg, tandem::to_string(tandem::dtype_of<T>)) || contains(msg, op_name)));
      }
    });
  }
}

template <class T>
void check_matmul_refusals(const Engine& eng) {
  const test::Vector<T> a = {1, 2, 3, 4}, b = {1, 0, 0, 1};
  for (const tandem::KernelInfo& k : eng.matmul_kernel_info()) {
    CAPTURE(k.name);
    const std::string dtype = tandem::to_string(tandem::dtype_of<T>);
    CAPTURE(dtype);
    test::Vector<T> c(4, T(-7));
    const auto run = [&] { eng.matmul<T>({a.data(), 2, 2, 2}, {b.data(), 2, 2, 2}, {c.data(), 2, 2, 2}, {k.name}); };
    if (!k.accepts(tandem::dtype_of<T>)) {
      const std::string msg = message_of(run);
      CHECK(contains(msg, k.name));
      CHECK(contains(msg, tandem::to_string(tandem::dtype_of<T>)));
    } else if (test::run_kernel(k, run)) {
      CHECK(c == a);  // A * I, exact in every precision
    }
  }
}

}  // namespace

// (What every table promises, "auto" first and its fields derived from the stages, and the equality with the
// tables read without a device: test_kernel_tables.cpp.)
TANDEM_BACKEND_TEST(kernel_info,
                    "KernelInfo: what the engine refuses by it: dtype, op, deterministic mode, precision") {
  const auto reduce = eng.reduce_kernel_info();
  const auto matmul = eng.matmul_kernel_info();
  REQUIRE(reduce.size() >= 2);
  REQUIRE(matmul.size() >= 2);
  // "auto" reduces every element type and op of the tables.
  CHECK(reduce.front().dtypes.size() == tandem::dtypes.size());
  CHECK(reduce.front().ops.size() == std::size(tandem::all_ops));

  if (eng.backend() == Backend::cpu) {
    // Every CPU reduce kernel takes every dtype and op; every CPU matmul kernel float and double.
    for (const auto& k : reduce) {
      CAPTURE(k.name);
      for (const auto& d : tandem::dtypes) CHECK(k.accepts(d.id));
      for (tandem::Op op : tandem::all_ops) CHECK(k.accepts(op));
    }
    for (const auto& k : matmul) {
      CHECK(k.accepts(tandem::Dtype::f32));
      CHECK(k.accepts(tandem::Dtype::f64));
    }
  }
  // A stage that is not the canonical order: deterministic mode refuses it, naming it and the mode.
  const std::vector<float> x = {1, 2, 3};
  for (const auto& k : reduce) {
    if (k.deterministic || !k.accepts(tandem::Dtype::f32) || !k.accepts(tandem::Op::sum)) continue;
    CAPTURE(k.name);
    const std::string msg = message_of([&] { eng.sum<float>(x, {.kernel = k.name, .deterministic = true}); });
    CHECK(contains(msg, k.name));
    CHECK(contains(msg, "deterministic"));
  }
  // The stages that round their inputs (tf32, bf16) take float only: double is refused.
  for (const auto& k : matmul) {
    if (k.precision == tandem::Precision::full) continue;
    CAPTURE(k.name);
    CHECK_FALSE(k.accepts(tandem::Dtype::f64));
    std::vector<double> a(4, 1), b(4, 1), c(4);
    CHECK(contains(message_of([&] {
                     eng.matmul<double>({a.data(), 2, 2, 2}, {b.data(), 2, 2, 2}, {c.data(), 2, 2, 2}, {k.name});
                   }),
                   k.name));
  }
  test::for_each_type([&]<class T>() {
    check_reduce_refusals<T>(eng);
    if constexpr (tandem::is_matmul_type_v<T> && !tandem::is_storage_type_v<T>) check_matmul_refusals<T>(eng);
  });
}

TANDEM_BACKEND_TEST(host_ranges, "sum/min/max/mean of std::vector and std::array without naming the type") {
  test::SplitMix64 g{41};
  const std::vector<float> v = test::random_vector<float>(10007, g);
  const auto s = eng.sum(v);
  static_assert(std::is_same_v<decltype(s), const float>);
  CHECK(test::same_bits(s, eng.sum<float>(std::span<const float>(v))));
  const auto ref = test::reduce_reference<float>(v);
  CHECK(test::judge_sum<float>(s, ref).ok);
  CHECK(test::same_bits(eng.min(v), ref.min()));
  CHECK(test::same_bits(eng.max(v), ref.max()));
  CHECK(test::same_bits(eng.mean(v), eng.mean<float>(std::span<const float>(v))));

  const std::array<std::int32_t, 5> arr = {2147483647, 2147483647, -5, 7, 1};
  const auto si = eng.sum(arr);
  static_assert(std::is_same_v<decltype(si), const std::int64_t>);
  CHECK(si == std::int64_t(2147483647) * 2 + 3);
  CHECK(si == eng.sum<std::int32_t>(std::span<const std::int32_t>(arr)));
  CHECK(eng.min(arr) == -5);
  CHECK(eng.max(arr) == 2147483647);
  static_assert(std::is_same_v<decltype(eng.mean(arr)), double>);

  std::vector<double> d = test::random_vector<double>(333, g);
  d[100] = -0.0;
  CHECK(test::same_bits(eng.sum(d), eng.sum<double>(std::span<const double>(d))));
  CHECK(test::same_bits(eng.min(d), test::reduce_reference<double>(d).min()));
  const std::vector<std::int64_t> none;
  CHECK(eng.sum(none) == 0);
  CHECK_THROWS_AS(eng.min(none), tandem::Error);
  // The same ranges upload without naming the type.
  const auto buf = eng.upload(v);
  static_assert(std::is_same_v<decltype(buf), const tandem::Buffer<float>>);
  CHECK(buf.to_vector() == v);
}

TEST_CASE("Error::kind: value, type and failure" * doctest::test_suite("common")) {
  auto kind_of = [](auto&& f) {
    try {
      f();
    } catch (const tandem::Error& e) {
      return std::optional<tandem::ErrorKind>(e.kind());
    }
    return std::optional<tandem::ErrorKind>();
  };
  using K = tandem::ErrorKind;
  const std::vector<float> x(10, 1.0f);
  const Engine cpu(Backend::cpu);
  CHECK(kind_of([] { tandem::parse_backend("gpu"); }) == K::value);
  CHECK(kind_of([&] { cpu.sum(std::span<const float>(x), {.kernel = "no_such_kernel"}); }) == K::value);
  CHECK(kind_of([&] { cpu.min(std::span<const float>(x.data(), 0)); }) == K::value);  // empty
  std::vector<float> two(2);
  CHECK(kind_of([&] {
          cpu.sum(tandem::MatrixView<const float>{x.data(), 2, 3, 1}, tandem::Per::row, std::span(two));
        }) == K::value);  // (ld < cols, and not 0)
  // A Buffer's upload / download outside it, or from / into a null span with elements: the caller's values.
  auto buf = cpu.upload<float>(x);
  std::vector<float> host(4);
  CHECK(kind_of([&] { buf.upload(std::span<const float>(host), 8); }) == K::value);
  CHECK(kind_of([&] { buf.download(std::span<float>(host), 7); }) == K::value);
  CHECK(kind_of([&] { buf.download(std::span<float>(host), 11); }) == K::value);
  CHECK(kind_of([&] { buf.upload(std::span<const float>(static_cast<const float*>(nullptr), 2)); }) == K::value);
  CHECK(kind_of([&] { buf.download(std::span<float>(static_cast<float*>(nullptr), 2)); }) == K::value);
  CHECK(kind_of([&] { (void)cpu.upload(std::span<const float>(static_cast<const float*>(nullptr), 3)); }) == K::value);
  CHECK(kind_of([&] { buf.upload(std::span<const float>(host), 6); }) == std::nullopt);  // [6, 10): inside
  if (test::cuda_usable()) {
    const Engine gpu(Backend::cuda);
    const std::vector<tandem::half> h(10, tandem::half(1.0f));
    // A stage that takes no half (the textbook stages): a type error.
    for (const tandem::KernelInfo& k : gpu.reduce_kernel_info())
      if (!k.accepts(tandem::Dtype::f16) && k.accepts(tandem::Op::sum))
        CHECK(kind_of([&] { gpu.sum(std::span<const tandem::half>(h), {.kernel = k.name}); }) == K::type);
  } else {
    CHECK(kind_of([] { Engine e(Backend::cuda); }) == K::failure);  // no usable GPU: not the caller's value
  }
}
