// bench_cuda's per-row / per-column families: the Buffer forms of eng.sum(BufferMatrix, Per, out) on a
// float matrix already on the GPU, against the vendor libraries on the same data.
//   per/row/cuda[/deterministic]/sum/float/<rows>x<cols>   eng.sum(..., Per::row, out)
//   per/row/baseline/cub_segmented/sum/float/<rows>x<cols> cub::DeviceSegmentedReduce::Sum, offsets = row starts
//   per/col/cuda[/deterministic]/sum/float/<rows>x<cols>   eng.sum(..., Per::col, out)
//   per/col/baseline/cublas_gemv/sum/float/<rows>x<cols>   cublasSgemv of the matrix with a ones vector
// Shapes 2^14 x 2^14 and 2^20 x 64 (1 GiB and 256 MiB). Every benchmark checks its results against a
// host double sum once before timing; the time is CUDA events around each call on the engine's stream
// (manual time), and bytes_per_second counts the matrix's bytes.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "benchmarks/bench_common.hpp"
#include "benchmarks/cub_segmented.hpp"
#include "benchmarks/read_sweep.hpp"

namespace tandem_bench {

using tandem::Backend;
using tandem::Per;

namespace {

struct PerShape {
  std::size_t rows, cols;
};

// The matrix (small integers: every sum exact in float, whatever the order) on the host and on the GPU,
// with the engine on a stream of the benchmark's own, so that events can time its calls. Made once per
// shape on first use and never freed (the benchmark binary exits with it: no teardown after CUDA's).
struct PerInput {
  PerShape s;
  cudaStream_t stream = nullptr;
  Engine eng;
  std::vector<float> host;
  Buffer<float> x;
  std::vector<float> want_row, want_col;  // the exact sums, computed on first use

  explicit PerInput(PerShape shape) : s(shape), eng(make_engine(stream)) {
    host.resize(s.rows * s.cols);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = float(int((i * 2654435761u) % 17) - 8);
    x = eng.upload<float>(host);
  }
  static Engine make_engine(cudaStream_t& stream) {
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    return Engine(Backend::cuda, {.device = -1, .stream = stream});
  }
  const std::vector<float>& want(Per per) {
    std::vector<float>& w = per == Per::row ? want_row : want_col;
    if (w.empty()) {
      std::vector<double> sums(per == Per::row ? s.rows : s.cols, 0.0);
      for (std::size_t i = 0; i < s.rows; ++i)
        for (std::size_t j = 0; j < s.cols; ++j) sums[per == Per::row ? i : j] += host[i * s.cols + j];
      w.assign(sums.begin(), sums.end());
    }
    return w;
  }
};

void verify(const std::vector<float>& got, const std::vector<float>& want, const std::string& name) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      throw std::runtime_error(name + ": result " + std::to_string(i) + " is " + std::to_string(got[i]) + ", want " +
                               std::to_string(want[i]));
}

// Times `run` (enqueues one call on in.stream) with CUDA events; bytes_per_second of the matrix's bytes.
void time_calls(benchmark::State& state, PerInput& in, const std::function<void()>& run) {
  cudaEvent_t start = nullptr, stop = nullptr;
  cuda_check(cudaEventCreate(&start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
  for (auto _ : state) {
    cuda_check(cudaEventRecord(start, in.stream), "cudaEventRecord");
    run();
    cuda_check(cudaEventRecord(stop, in.stream), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    state.SetIterationTime(double(ms) / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  const double bytes = double(in.s.rows * in.s.cols) * sizeof(float);
  set_bytes_counter(state, bytes);
}

std::string label(const PerShape& s) { return std::to_string(s.rows) + "x" + std::to_string(s.cols); }

void register_shape(PerShape s) {
  auto input = std::make_shared<PerInput*>(nullptr);
  auto get = [input, s]() -> PerInput& {
    if (!*input) *input = new PerInput(s);  // kept until the process exits (see PerInput)
    return **input;
  };
  for (Per per : {Per::row, Per::col})
    for (bool det : {false, true}) {
      const std::string name = std::string("per/") + tandem::to_string(per) + "/cuda" + (det ? "/deterministic" : "") +
                               "/sum/float/" + label(s);
      benchmark::RegisterBenchmark(name.c_str(), guarded([get, per, det, name](benchmark::State& state) {
                                     PerInput& in = get();
                                     const std::size_t count = per == Per::row ? in.s.rows : in.s.cols;
                                     const Buffer<float> out = in.eng.buffer<float>(count);
                                     const auto m = in.x.matrix(in.s.rows, in.s.cols);
                                     const tandem::ReduceOptions opts{"auto", det};
                                     in.eng.sum(m, per, out, opts);
                                     verify(out.to_vector(), in.want(per), name);
                                     time_calls(state, in, [&] { in.eng.sum(m, per, out, opts); });
                                   }))
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  const std::string row_name = "per/row/baseline/cub_segmented/sum/float/" + label(s);
  benchmark::RegisterBenchmark(row_name.c_str(), guarded([get, row_name](benchmark::State& state) {
                                 PerInput& in = get();
                                 std::vector<std::int64_t> offsets(in.s.rows + 1);
                                 for (std::size_t i = 0; i <= in.s.rows; ++i) offsets[i] = std::int64_t(i * in.s.cols);
                                 const auto d_offsets = in.eng.upload<std::int64_t>(offsets);
                                 const auto out = in.eng.buffer<float>(in.s.rows);
                                 const int segments = int(in.s.rows);
                                 const std::size_t temp_bytes = cub_segmented_sum_temp_bytes(segments);
                                 const auto temp = in.eng.buffer<std::int64_t>(temp_bytes / 8 + 1);
                                 auto run = [&] {
                                   cub_segmented_sum(in.x.data(), d_offsets.data(), segments, out.data(), temp.data(),
                                                     temp_bytes, in.stream);
                                 };
                                 run();
                                 verify(out.to_vector(), in.want(Per::row), row_name);
                                 time_calls(state, in, run);
                               }))
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  const std::string col_name = "per/col/baseline/cublas_gemv/sum/float/" + label(s);
  benchmark::RegisterBenchmark(
      col_name.c_str(), guarded([get, col_name](benchmark::State& state) {
        PerInput& in = get();
        const auto ones = in.eng.upload<float>(std::vector<float>(in.s.rows, 1.0f));
        const auto out = in.eng.buffer<float>(in.s.cols);
        cublasHandle_t handle = nullptr;
        if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
        cublasSetStream(handle, in.stream);
        const float one = 1.0f, zero = 0.0f;
        // The row-major matrix is column-major cols x rows (ld = cols): y = M * ones.
        auto run = [&] {
          if (cublasSgemv(handle, CUBLAS_OP_N, int(in.s.cols), int(in.s.rows), &one, in.x.data(), int(in.s.cols),
                          ones.data(), 1, &zero, out.data(), 1) != CUBLAS_STATUS_SUCCESS)
            throw std::runtime_error("cublasSgemv failed");
        };
        try {
          run();
          verify(out.to_vector(), in.want(Per::col), col_name);
          time_calls(state, in, run);
        } catch (...) {
          cublasDestroy(handle);
          throw;
        }
        cublasDestroy(handle);
      }))
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

void register_cuda_per() {
  register_shape({std::size_t(1) << 14, std::size_t(1) << 14});
  register_shape({std::size_t(1) << 20, 64});
}

}  // namespace tandem_bench
