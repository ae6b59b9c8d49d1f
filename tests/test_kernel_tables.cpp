// The kernel tables: tandem::reduce_kernel_info(Backend) / matmul_kernel_info(Backend), a backend's tables
// without an engine or its device, and an engine's own (Engine::reduce_kernel_info / matmul_kernel_info).
// The tables without a device are an engine's field for field but runs_here (there: whether a kernel needs
// nothing beyond the backend); every table keeps the promises of KernelInfo (include/tandem/types.hpp):
// "auto" first and what it states derived from the stages it may pick, distinct names, a precision per
// element type. The CUDA tables come from the CUDA module wherever it loads, GPU or not (CI: the module
// loads, no GPU); where it cannot be loaded (the installed package without the module,
// tests/modules/without_cuda.sh) or the build has no CUDA, they are a tandem::Error with the reason.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tests/support.hpp"

namespace {

using tandem::KernelInfo;

enum class Kind { reduce, matmul };
std::string kind_name(Kind kind) { return kind == Kind::reduce ? "reduce" : "matmul"; }

// A table as the JSON lines of its kernels: every field of every KernelInfo, in order, but runs_here
// (which says where the table was read: on a device or without one).
std::vector<std::string> json_but_runs_here(const std::vector<KernelInfo>& infos) {
  std::vector<std::string> out;
  for (KernelInfo k : infos) {
    k.runs_here = true;
    out.push_back(test::kernel_json(k, "kernel"));
  }
  return out;
}

tandem::BackendStatus status_of(tandem::Backend b) {
  for (const auto& s : tandem::backend_status())
    if (s.backend == b) return s;
  FAIL("backend_status() lists no " << tandem::to_string(b));
  return {};
}

// The lowest of precisions: the one whose input rounding (the bound's model, verify/bounds.hpp) is largest.
tandem::Precision lowest(const std::vector<tandem::Precision>& precisions) {
  tandem::Precision p = tandem::Precision::full;
  for (tandem::Precision q : precisions)
    if (test::input_rounding(q) > test::input_rounding(p)) p = q;
  return p;
}

// The promises every table keeps, whether read with a device or without one.
void check_table(const std::vector<KernelInfo>& infos, Kind kind) {
  INFO(kind_name(kind) << " table");
  REQUIRE(infos.size() >= 2);  // "auto" and at least one stage
  std::set<std::string> names;
  for (const KernelInfo& k : infos) {
    CAPTURE(k.name);
    CHECK_FALSE(k.name.empty());
    CHECK(names.insert(k.name).second);  // distinct names
    CHECK_FALSE(k.dtypes.empty());
    CHECK(std::set<tandem::Dtype>(k.dtypes.begin(), k.dtypes.end()).size() == k.dtypes.size());
    // One precision per element type: full where the type's values are exact in the rounded format.
    REQUIRE(k.precisions.size() == k.dtypes.size());
    for (std::size_t i = 0; i < k.dtypes.size(); ++i) {
      CHECK(k.precisions[i] == tandem::precision_for(k.dtypes[i], k.precision));
      CHECK(k.precision_of(k.dtypes[i]) == k.precisions[i]);
    }
    CHECK(k.precision == lowest(k.precisions));
    if (kind == Kind::reduce) {
      CHECK_FALSE(k.ops.empty());
      CHECK(std::set<tandem::Op>(k.ops.begin(), k.ops.end()).size() == k.ops.size());
      CHECK(k.precision == tandem::Precision::full);  // reductions round no input
      CHECK_FALSE(k.native_16bit);                    // (a matmul kernel's property)
    } else {
      CHECK(k.ops.empty());
      for (tandem::Dtype d : k.dtypes) CHECK(tandem::info(d).matmul);
      CHECK_FALSE(k.per_row_col);  // (per row / per column is a reduction's form)
      if (k.native_16bit) CHECK((k.accepts(tandem::Dtype::bf16) && k.accepts(tandem::Dtype::f16)));
    }
    if (k.requirement.empty()) CHECK(k.runs_here);  // a kernel that needs nothing more runs wherever its backend does
  }
  // "auto" first: deterministic mode always runs under it, in full precision, needing nothing more;
  // it takes exactly what some stage takes and states the weakest determinism of the stages it may pick.
  const KernelInfo& a = infos.front();
  CHECK(a.name == "auto");
  CHECK(a.deterministic);
  CHECK(a.precision == tandem::Precision::full);
  CHECK(a.requirement.empty());
  CHECK(a.runs_here);
  CHECK_FALSE(a.auto_pick);
  CHECK_FALSE(a.baseline);
  if (kind == Kind::reduce) CHECK(a.per_row_col);  // per-row / per-column reductions run "auto" on every backend
  // "auto" multiplies 16-bit inputs as stored exactly where a stage it may pick does.
  bool native = false;
  for (const KernelInfo& k : infos) native = native || (k.auto_pick && k.native_16bit);
  CHECK(a.native_16bit == native);
  std::set<tandem::Dtype> dtypes;
  std::set<tandem::Op> ops;
  tandem::Determinism weakest = tandem::Determinism::every_backend;
  std::size_t picked = 0;
  for (std::size_t i = 1; i < infos.size(); ++i) {
    const KernelInfo& k = infos[i];
    dtypes.insert(k.dtypes.begin(), k.dtypes.end());
    ops.insert(k.ops.begin(), k.ops.end());
    if (k.auto_pick) weakest = std::min(weakest, k.determinism), ++picked;
  }
  CHECK(picked > 0);
  CHECK(a.determinism == weakest);
  CHECK(std::set<tandem::Dtype>(a.dtypes.begin(), a.dtypes.end()) == dtypes);
  CHECK(std::set<tandem::Op>(a.ops.begin(), a.ops.end()) == ops);
}

// Read without a device, a kernel runs "here" exactly when it needs nothing beyond the backend.
void check_device_free(const std::vector<KernelInfo>& infos) {
  for (const KernelInfo& k : infos) {
    CAPTURE(k.name);
    CHECK(k.runs_here == k.requirement.empty());
  }
}

// An engine's per-row / per-column reductions run exactly the kernels whose KernelInfo says per_row_col.
void check_per_row_col(const tandem::Engine& eng) {
  const std::vector<float> m = {1, 2, 3, 4, 5, 6};
  for (const KernelInfo& k : eng.reduce_kernel_info()) {
    if (!k.accepts(tandem::Dtype::f32) || !k.accepts(tandem::Op::sum) || !k.runs_here) continue;
    CAPTURE(k.name);
    std::vector<float> rows(2);
    const auto run = [&] { eng.sum<const float>({m.data(), 2, 3, 3}, tandem::Per::row, rows, {k.name}); };
    if (k.per_row_col) {
      run();
      CHECK(rows == std::vector<float>{6, 15});
    } else {
      CHECK(test::contains(test::message_of(run), k.name));
    }
  }
}

}  // namespace

TEST_CASE("kernel tables: every usable backend's without a device equal its engine's but runs_here" *
          doctest::test_suite("common")) {
  std::size_t compared = 0;
  for (tandem::Backend b : tandem::all_backends) {
    if (!test::usable(b)) continue;
    const std::string backend = tandem::to_string(b);  // (doctest prints a char* as a pointer)
    CAPTURE(backend);
    const tandem::Engine eng(b);
    for (Kind kind : {Kind::reduce, Kind::matmul}) {
      INFO(kind_name(kind));
      const auto free = kind == Kind::reduce ? tandem::reduce_kernel_info(b) : tandem::matmul_kernel_info(b);
      const auto own = kind == Kind::reduce ? eng.reduce_kernel_info() : eng.matmul_kernel_info();
      const auto free_json = json_but_runs_here(free), own_json = json_but_runs_here(own);
      REQUIRE(free_json.size() == own_json.size());
      for (std::size_t i = 0; i < free_json.size(); ++i) CHECK(free_json[i] == own_json[i]);
      check_table(free, kind);
      check_table(own, kind);
      check_device_free(free);
      ++compared;
    }
    check_per_row_col(eng);
  }
  CHECK(compared >= 2);  // the CPU's two tables at least
}

TEST_CASE("kernel tables without an engine: CUDA's from its module, with or without a GPU" *
          doctest::test_suite("common")) {
  const tandem::BackendStatus cuda = status_of(tandem::Backend::cuda);
  // Reading the tables loads the module where it can (the probe does not, where no driver reports a GPU).
  try {
    (void)tandem::reduce_kernel_info(tandem::Backend::cuda);
  } catch (const tandem::Error&) {
  }
  const tandem::ModuleStatus* module = nullptr;
  const auto modules = tandem::module_status();
  for (const auto& m : modules)
    if (m.name == "cuda") module = &m;
  if (module != nullptr && module->loaded) {
    // The module loads (a GPU or not): the tables are there, whether CUDA can run here or not.
    INFO("CUDA usable here: " << cuda.usable << " (" << cuda.reason << ")");
    const auto reduce = tandem::reduce_kernel_info(tandem::Backend::cuda);
    const auto matmul = tandem::matmul_kernel_info(tandem::Backend::cuda);
    check_table(reduce, Kind::reduce);
    check_table(matmul, Kind::matmul);
    check_device_free(reduce);
    check_device_free(matmul);
    // Not the CPU's tables.
    CHECK(json_but_runs_here(reduce) != json_but_runs_here(tandem::reduce_kernel_info(tandem::Backend::cpu)));
    return;
  }
  // No module: a tandem::Error (a failure, as Engine(Backend::cuda) gives) with the reason.
  for (auto read : {&tandem::reduce_kernel_info, &tandem::matmul_kernel_info}) {
    try {
      (void)read(tandem::Backend::cuda);
      FAIL("no tandem::Error without the CUDA module");
    } catch (const tandem::Error& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(e.kind() == tandem::ErrorKind::failure);
      CHECK(test::contains(what, "CUDA"));
      if (module != nullptr)  // compiled in, the module not loaded: the loader's reason
        CHECK(test::contains(what, module->reason));
      else  // a build without CUDA: says so, and what to do
        CHECK(test::contains(what, "-DTANDEM_WITH_CUDA=ON"));
    }
  }
}
