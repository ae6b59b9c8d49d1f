// bench_mpi: tandem::mpi::Engine under mpirun (one GPU per rank, or CPU ranks), through the public API.
// Every rank runs the same benchmarks in lockstep (fixed iterations); each iteration's time is the
// slowest rank's (MPI_Allreduce of the wall-clock times), and only rank 0 reports.
//   mpi/all_reduce/<variant>/<dtype>/<bytes>/ranks:<P>   variant: nccl (ncclAllReduce called directly,
//       the vendor baseline), plain (tandem, ncclAllReduce / MPI_Allreduce inside), deterministic (rank
//       order), nccl_alltoall (the deterministic variant's first step alone, ncclSend / ncclRecv); counters
//       bus_bytes_per_second (bytes * 2 (P - 1) / P per second, nccl-tests' "busbw") and bytes_per_second (algorithm
//       bandwidth)
//   mpi/sum[_det]/buffer/float/<total>/ranks:<P>          one sum of `total` floats split evenly over
//       the ranks (a Buffer each); bytes_per_second of the whole
//   mpi/matmul/<dtype>/<n>/ranks:<P>                      C = A B, n x n x n, rows of A and C split over
//       the ranks, B whole on each; flop_per_second of the whole
// Run with NCCL_NVLS_ENABLE=0, e.g. mpirun -np 4 bench_mpi --benchmark_out=mpi4.json (rank 0 writes it).
// TANDEM_BENCH_SCALE=small shrinks the sizes (a quick check); the CPU backend runs smaller sizes itself.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tandem/float16.hpp"
#include "tandem/mpi.hpp"

#ifdef TANDEM_BENCH_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

int g_rank = 0, g_size = 1;
tandem::mpi::Engine* g_eng = nullptr;

bool small() {
  const char* v = std::getenv("TANDEM_BENCH_SCALE");
  return v && std::string(v) == "small";
}

// Runs f once per iteration on every rank at once; the iteration's time is the slowest rank's.
template <class F>
void lockstep(benchmark::State& state, F&& f) {
  try {
    f();  // (warm-up: pools, communicators)
    for (auto _ : state) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = Clock::now();
      f();
      double mine = std::chrono::duration<double>(Clock::now() - t0).count(), slowest = 0;
      MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      state.SetIterationTime(slowest);
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void rate(benchmark::State& state, const char* name, double per_iteration) {
  state.counters[name] =
      benchmark::Counter(per_iteration, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

template <class T>
void all_reduce(benchmark::State& state, std::size_t bytes, int variant) {
  const std::size_t n = bytes / sizeof(T);
  const tandem::Engine& local = g_eng->local();
  auto x = local.upload(std::vector<T>(n, T(1.0f)));
#ifdef TANDEM_BENCH_NCCL
  static ncclComm_t comm = nullptr;
  static cudaStream_t stream = nullptr;
  if ((variant == 0 || variant == 3) &&
      comm == nullptr) {  // one communicator of our own, as an application would make it
    ncclUniqueId id;
    if (g_rank == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    cudaSetDevice(x.shards().at(0).device);
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (ncclCommInitRank(&comm, g_size, id, g_rank) != ncclSuccess) comm = nullptr;
  }
#endif
  lockstep(state, [&] {
    if (variant == 3) {  // the all-to-all of slices alone (the deterministic variant's first step)
#ifdef TANDEM_BENCH_NCCL
      static void* recv = nullptr;
      static std::size_t recv_bytes = 0;
      const std::size_t slice = bytes / std::size_t(g_size);
      if (recv_bytes < bytes) {
        cudaFree(recv);
        cudaMalloc(&recv, bytes);
        recv_bytes = bytes;
      }
      ncclGroupStart();
      for (int p = 0; p < g_size; ++p)
        if (p != g_rank) {
          ncclSend(reinterpret_cast<char*>(x.data()) + slice * std::size_t(p), slice, ncclChar, p, comm, stream);
          ncclRecv(static_cast<char*>(recv) + slice * std::size_t(p), slice, ncclChar, p, comm, stream);
        }
      if (ncclGroupEnd() != ncclSuccess || cudaStreamSynchronize(stream) != cudaSuccess)
        throw std::runtime_error("ncclSend / ncclRecv failed");
#endif
    } else if (variant == 0) {
#ifdef TANDEM_BENCH_NCCL
      if (comm == nullptr) throw std::runtime_error("ncclCommInitRank failed");
      const ncclDataType_t t = sizeof(T) == 4 ? ncclFloat32 : ncclBfloat16;
      if (ncclAllReduce(x.data(), x.data(), n, t, ncclSum, comm, stream) != ncclSuccess ||
          cudaStreamSynchronize(stream) != cudaSuccess)
        throw std::runtime_error("ncclAllReduce failed");
#else
      throw std::runtime_error("built without NCCL");
#endif
    } else {
      g_eng->all_reduce(x, {variant == 2});
    }
  });
  rate(state, "bytes_per_second", double(bytes));
  rate(state, "bus_bytes_per_second", double(bytes) * 2.0 * double(g_size - 1) / double(g_size));
}

void sum(benchmark::State& state, std::size_t total, bool deterministic) {
  const tandem::Engine& local = g_eng->local();
  const std::size_t first = total * std::size_t(g_rank) / std::size_t(g_size);
  const std::size_t mine = total * std::size_t(g_rank + 1) / std::size_t(g_size) - first;
  const auto x = local.buffer<float>(mine);  // (not filled: the values do not change the time)
  tandem::ReduceOptions o;
  o.deterministic = deterministic;
  lockstep(state, [&] { benchmark::DoNotOptimize(g_eng->sum(x, o)); });
  rate(state, "bytes_per_second", double(total) * 4);
}

template <class T>
void matmul(benchmark::State& state, std::size_t n) {
  const tandem::Engine& local = g_eng->local();
  const std::size_t r0 = n * std::size_t(g_rank) / std::size_t(g_size);
  const std::size_t rows = n * std::size_t(g_rank + 1) / std::size_t(g_size) - r0;
  const auto a = local.upload(std::vector<T>(rows * n, T(0.25f)));
  const auto b = local.upload(std::vector<T>(n * n, T(0.5f)));
  auto c = local.template buffer<tandem::compute_t<T>>(rows * n);
  lockstep(state, [&] {
    g_eng->matmul(a.matrix(rows, n), b.matrix(n, n), c.matrix(rows, n));
    local.synchronize();
  });
  rate(state, "flop_per_second", 2.0 * double(n) * double(n) * double(n));
}

void register_all() {
  const bool gpu = g_eng->local().backend() == tandem::Backend::cuda;
  const std::string tail = "/ranks:" + std::to_string(g_size);
  auto add = [](const std::string& name, auto&& f, int iterations) {
    benchmark::RegisterBenchmark(name.c_str(), f)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(iterations);
  };
  const std::size_t div = small() ? 16 : 1;
  if (g_size > 1) {
    const char* variants[] = {"nccl", "plain", "deterministic", "nccl_alltoall"};
    for (std::size_t mib : {std::size_t(1), std::size_t(16), std::size_t(256)})
      for (int v = gpu ? 0 : 1; v < (gpu ? 4 : 3); ++v) {
        if (!gpu && mib > 16) continue;  // (MPI over shared memory: seconds per call)
        const std::size_t bytes = mib << 20;
        add(
            "mpi/all_reduce/" + std::string(variants[v]) + "/float/" + std::to_string(bytes) + tail,
            [bytes, v](benchmark::State& s) { all_reduce<float>(s, bytes, v); }, 20);
        if (mib == 256)
          add(
              "mpi/all_reduce/" + std::string(variants[v]) + "/bfloat16/" + std::to_string(bytes) + tail,
              [bytes, v](benchmark::State& s) { all_reduce<tandem::bfloat16>(s, bytes, v); }, 20);
      }
  }
  const std::size_t total = (gpu ? std::size_t(1) << 32 : std::size_t(1) << 28) / div;
  for (bool det : {false, true})
    add(
        std::string(det ? "mpi/sum_det" : "mpi/sum") + "/buffer/float/" + std::to_string(total) + tail,
        [total, det](benchmark::State& s) { sum(s, total, det); }, 10);
  const std::size_t mm = (gpu ? 16384 : 2048) / (small() ? 4 : 1);
  add(
      "mpi/matmul/float/" + std::to_string(mm) + tail, [mm](benchmark::State& s) { matmul<float>(s, mm); }, 5);
  add(
      "mpi/matmul/bfloat16/" + std::to_string(mm) + tail,
      [mm](benchmark::State& s) { matmul<tandem::bfloat16>(s, mm); }, gpu ? 10 : 3);
}

class Silent : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // never NVLink multicast unless the caller says otherwise
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  // Only rank 0 reports (and writes --benchmark_out): the others drop the output flags.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i)
    if (g_rank == 0 || std::strncmp(argv[i], "--benchmark_out", 15) != 0) args.push_back(argv[i]);
  int count = int(args.size());
  benchmark::Initialize(&count, args.data());
  int status = 0;
  {
    tandem::mpi::Engine eng(MPI_COMM_WORLD);
    g_eng = &eng;
    register_all();
    Silent silent;
    if (g_rank == 0)
      benchmark::RunSpecifiedBenchmarks();
    else
      benchmark::RunSpecifiedBenchmarks(&silent);
    g_eng = nullptr;
  }
  benchmark::Shutdown();
  MPI_Finalize();
  return status;
}
