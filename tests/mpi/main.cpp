// The MPI suite's runner: MPI_Init, doctest, MPI_Finalize. Every rank runs every test (the tests make
// collective calls); a rank's failures are its own, and the exit status is 1 if any rank failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  doctest::Context context(argc, argv);
  if (rank != 0) context.setOption("out", "/dev/null");  // one report (rank 0's); failures still count
  const int failed = context.run() != 0;
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
