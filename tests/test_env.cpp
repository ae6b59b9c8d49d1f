// The environment variables that only some backends read: TANDEM_DEVICE picks the GPU of a CUDA engine;
// CPU engines ignore it entirely, whatever it holds.
#include <vector>

#include "tests/support.hpp"

TEST_SUITE("common") {
  TEST_CASE("TANDEM_DEVICE: ignored by CPU engines, checked by CUDA engines") {
    const test::ScopedVar device("TANDEM_DEVICE", "abc");
    const test::ScopedVar devices("TANDEM_DEVICES", nullptr);

    const tandem::Engine cpu(tandem::Backend::cpu);
    CHECK(cpu.backend() == tandem::Backend::cpu);
    const std::vector<float> x = {1.0f, 2.0f, 3.5f};
    CHECK(cpu.sum<float>(x) == 6.5f);

    if (test::cuda_usable()) {
      try {
        const tandem::Engine cuda(tandem::Backend::cuda);
        FAIL("a CUDA engine with TANDEM_DEVICE=abc was made");
      } catch (const tandem::Error& e) {
        CHECK(e.kind() == tandem::ErrorKind::value);
        CHECK(test::contains(e.what(), "TANDEM_DEVICE='abc'"));
      }
    }
  }
}
