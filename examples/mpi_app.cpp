// tandem::mpi::Engine from an installed tandem: each rank holds a part of 1..n, the ranks sum, find the
// maximum and its index together, and every rank checks the global results. Start it with
//   mpirun -np 2 ./example_mpi
#include <mpi.h>

#include <cstdio>
#include <tandem/mpi.hpp>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const tandem::mpi::Engine eng(MPI_COMM_WORLD);  // TANDEM_BACKEND=cpu|cuda|auto, on every rank
    const std::size_t n = 1'000'003, ranks = std::size_t(eng.size()), r = std::size_t(eng.rank());
    const std::size_t first = n * r / ranks, last = n * (r + 1) / ranks;  // this rank's part of 1..n
    std::vector<double> mine;
    for (std::size_t i = first; i < last; ++i) mine.push_back(double(i + 1));
    const double sum = eng.sum(mine, {.deterministic = true}), max = eng.max(mine);
    const std::size_t at = eng.argmax(mine);
    const bool ok = sum == double(n) * double(n + 1) / 2 && max == double(n) && at == n - 1;
    if (eng.rank() == 0)
      std::printf("%d ranks (%s): sum %.0f, max %.0f at %zu: %s\n", eng.size(),
                  tandem::to_string(eng.local().backend()), sum, max, at,
                  ok ? "example_mpi: ok" : "example_mpi: WRONG RESULT");
    status = ok ? 0 : 1;
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "example_mpi: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
