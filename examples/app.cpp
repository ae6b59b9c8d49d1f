// A small app linked against an installed tandem: reductions and a matrix product on whichever
// backend TANDEM_BACKEND (or auto) picks, checked against plain loops.
#include <cmath>
#include <cstdio>
#include <numeric>
#include <tandem/tandem.hpp>
#include <vector>

int main() {
  try {
    tandem::Engine eng;  // the backend TANDEM_BACKEND names (auto, or unset: the GPU where one is usable)
    std::printf("backend: %s (%s)\n", tandem::to_string(eng.backend()), eng.device().name.c_str());

    std::vector<float> x(1'000'003);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(i % 10);
    const float s = eng.sum<float>(x);
    const double expect = std::accumulate(x.begin(), x.end(), 0.0);
    std::printf("sum = %.1f (expected %.1f), max = %.1f, mean = %.4f\n", s, expect, eng.max<float>(x),
                eng.mean<float>(x));

    // 2x3 times 3x2.
    std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12}, c(4);
    eng.matmul<double>({a.data(), 2, 3, 3}, {b.data(), 3, 2, 2}, {c.data(), 2, 2, 2});
    std::printf("C = [%g %g; %g %g] (expected [58 64; 139 154])\n", c[0], c[1], c[2], c[3]);

    const bool ok = s == float(expect) && c[0] == 58 && c[1] == 64 && c[2] == 139 && c[3] == 154;
    std::printf("%s\n", ok ? "example: ok" : "example: WRONG RESULT");
    return ok ? 0 : 1;
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "example: %s\n", e.what());
    return 1;
  }
}
