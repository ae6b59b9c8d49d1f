// A CUDA app's own memory, stream and kernels with tandem's reductions in between, in stream order
// (docs/API.md, "Inside a CUDA application"). Built by examples/CMakeLists.txt when CMake finds nvcc; runs
// on a usable GPU and says so and exits 0 elsewhere.
#include <cuda_runtime.h>

#include <cstdio>
#include <tandem/tandem.hpp>

__global__ void fill(float* x, std::size_t n) {  // x[i] = i % 10
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = float(i % 10);
}

__global__ void scale_by_max(float* results) { results[0] /= results[1]; }  // sum / max, on the GPU

int main() {
  for (const tandem::BackendStatus& s : tandem::backend_status())
    if (s.backend == tandem::Backend::cuda && !s.usable) {
      std::printf("cuda_example: no usable GPU here (%s); nothing to run\n", s.reason.c_str());
      return 0;
    }
  try {
    const std::size_t n = 1'000'003;
    cudaStream_t stream;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return 1;
    float* d_x = nullptr;
    if (cudaMalloc(&d_x, n * sizeof(float)) != cudaSuccess) return 1;

    float got = 0;
    {  // The engine and its Buffers borrow the stream: they go before it does.
      tandem::Engine eng(tandem::Backend::cuda, {.device = 0, .stream = stream});
      tandem::Buffer<float> x = eng.wrap(d_x, n);  // no copy; d_x stays ours
      tandem::Buffer<float> out = eng.buffer<float>(2);

      fill<<<256, 256, 0, stream>>>(d_x, n);  // our work ...
      eng.sum_into(x, out, 0);                // ... then tandem's, in stream order, no wait
      eng.max_into(x, out, 1);
      scale_by_max<<<1, 1, 0, stream>>>(out.data());  // consumes the results on the GPU
      eng.synchronize();
      got = out.to_vector()[0];
    }
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += double(i % 10);
    const bool ok = std::abs(got - float(sum / 9.0)) <= 1e-6f * float(sum / 9.0);
    std::printf("sum / max = %.1f (expected %.1f): %s\n", got, sum / 9.0, ok ? "cuda_example: ok" : "WRONG RESULT");
    cudaFree(d_x);
    cudaStreamDestroy(stream);
    return ok ? 0 : 1;
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "cuda_example: %s\n", e.what());
    return 1;
  }
}
