// tandem::reduce_kernel_info(Backend) / matmul_kernel_info(Backend): a backend's kernel tables without an
// engine or its device. They are an engine's tables exactly; the CUDA tables come from the CUDA module
// wherever it loads, GPU or not (CI: the module loads, no GPU); where it cannot be loaded (the installed
// package without the module, tests/modules/without_cuda.sh) or the build has no CUDA, they are a
// tandem::Error with the reason.
#include <string>
#include <vector>

#include "tests/support.hpp"

namespace {

// A table as the JSON lines of its kernels: every field of every KernelInfo, in order.
std::vector<std::string> as_json(const std::vector<tandem::KernelInfo>& infos) {
  std::vector<std::string> out;
  for (const auto& k : infos) out.push_back(test::kernel_json(k, "kernel"));
  return out;
}

tandem::BackendStatus status_of(tandem::Backend b) {
  for (const auto& s : tandem::backend_status())
    if (s.backend == b) return s;
  FAIL("backend_status() lists no " << tandem::to_string(b));
  return {};
}

// "auto" first (with per_row_col: per-row / per-column reductions run it), then stages of distinct names.
void check_shape(const std::vector<tandem::KernelInfo>& infos, bool reduce) {
  REQUIRE(infos.size() >= 2);
  CHECK(infos.front().name == "auto");
  CHECK(infos.front().per_row_col == reduce);
  for (std::size_t i = 1; i < infos.size(); ++i) {
    CHECK(infos[i].name != "auto");
    CHECK_FALSE(infos[i].dtypes.empty());
    for (std::size_t j = 1; j < i; ++j) CHECK(infos[i].name != infos[j].name);
  }
}

}  // namespace

TEST_CASE("kernel tables without an engine: every usable backend's equal its engine's" *
          doctest::test_suite("common")) {
  for (tandem::Backend b : tandem::all_backends) {
    if (!test::usable(b)) continue;
    CAPTURE(tandem::to_string(b));
    const tandem::Engine eng(b);
    CHECK(as_json(tandem::reduce_kernel_info(b)) == as_json(eng.reduce_kernel_info()));
    CHECK(as_json(tandem::matmul_kernel_info(b)) == as_json(eng.matmul_kernel_info()));
  }
  // The CPU, always there: its tables, read twice, are the same.
  check_shape(tandem::reduce_kernel_info(tandem::Backend::cpu), true);
  check_shape(tandem::matmul_kernel_info(tandem::Backend::cpu), false);
  CHECK(as_json(tandem::reduce_kernel_info(tandem::Backend::cpu)) ==
        as_json(tandem::reduce_kernel_info(tandem::Backend::cpu)));
}

TEST_CASE("kernel tables without an engine: CUDA's from its module, with or without a GPU" *
          doctest::test_suite("common")) {
  const tandem::BackendStatus cuda = status_of(tandem::Backend::cuda);  // (the probe loads the module)
  const tandem::ModuleStatus* module = nullptr;
  const auto modules = tandem::module_status();
  for (const auto& m : modules)
    if (m.name == "cuda") module = &m;
  if (module != nullptr && module->loaded) {
    // The module loads (a GPU or not): the tables are there, whether CUDA can run here or not.
    INFO("CUDA usable here: " << cuda.usable << " (" << cuda.reason << ")");
    const auto reduce = tandem::reduce_kernel_info(tandem::Backend::cuda);
    const auto matmul = tandem::matmul_kernel_info(tandem::Backend::cuda);
    check_shape(reduce, true);
    check_shape(matmul, false);
    // Not the CPU's tables.
    CHECK(as_json(reduce) != as_json(tandem::reduce_kernel_info(tandem::Backend::cpu)));
    if (cuda.usable) {
      const tandem::Engine eng(tandem::Backend::cuda);
      CHECK(as_json(reduce) == as_json(eng.reduce_kernel_info()));
      CHECK(as_json(matmul) == as_json(eng.matmul_kernel_info()));
    }
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
