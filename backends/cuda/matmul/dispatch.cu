// The matmul ladder's entry points (kernels.hpp): the stage table, the "auto" choice, and one launcher
// per stage that computes its launch configuration. The stage files (*.cuh beside this one) are parts
// of this translation unit and are included nowhere else.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/matmul/cublas_gemm.cuh"
#include "backends/cuda/matmul/naive.cuh"
#include "backends/cuda/matmul/register_tiled.cuh"
#include "backends/cuda/matmul/tensor_core.cuh"
#include "backends/cuda/matmul/tiled.cuh"
#include "backends/cuda/matmul/wgmma.hpp"

namespace tandem::cuda {
namespace {

using namespace matmul_stages;

// ---- What "auto" runs --------------------------------------------------------------------------
// Only full-precision stages belong here (never tf32/bf16). Measured on an H200, m = k = n = 4096,
// TFLOP/s (median of 15): f32 naive 2.1, tiled_16 8.0, tiled_32 8.0, register_tiled 44.2, cublas 51.1
// (tensor_core_tf32 90, cublas_tf32 392, tensor_core_bf16 153, cublas_bf16 446); f64 tiled_16 4.6,
// register_tiled 18.5, cublas 60.7 (cuBLAS runs f64 on the tensor cores, still full fp64 precision).
// At 1024^3, f32: register_tiled 20.7, cublas 34.1. cuBLAS was the fastest full-precision stage at every
// size measured, so auto runs it; cuBLAS takes 32-bit sizes, so larger problems go to register_tiled.
//   dtype  max(m, k, n)  stage
//   any    < 2^31        cublas
//   any    >= 2^31       register_tiled
struct AutoRule {
  Dtype dtype;
  std::int64_t min_dim;
  const char* stage;
};
constexpr AutoRule kAutoRules[] = {
    {Dtype::f32, 1, "cublas"},
    {Dtype::f64, 1, "cublas"},
};

// ---- The stages, in ladder order ---------------------------------------------------------------
enum class Stage {
  naive,
  tiled_16,
  tiled_32,
  register_tiled,
  tensor_core_tf32,
  tensor_core_bf16,
  wgmma_tf32,
  wgmma_bf16,
  cublas,
  cublas_tf32,
  cublas_bf16,
};

struct StageInfo {
  Stage stage;
  const char* name;
  bool float_only;  // tensor-core and reduced-precision stages
};
constexpr StageInfo kStages[] = {
    {Stage::naive, "naive", false},
    {Stage::tiled_16, "tiled_16", false},
    {Stage::tiled_32, "tiled_32", false},
    {Stage::register_tiled, "register_tiled", false},
    {Stage::tensor_core_tf32, "tensor_core_tf32", true},
    {Stage::tensor_core_bf16, "tensor_core_bf16", true},
    {Stage::wgmma_tf32, "wgmma_tf32", true},  // wgmma.cu (sm_90a)
    {Stage::wgmma_bf16, "wgmma_bf16", true},
    {Stage::cublas, "cublas", false},
    {Stage::cublas_tf32, "cublas_tf32", true},
    {Stage::cublas_bf16, "cublas_bf16", true},
};

// ---- Launch helpers ------------------------------------------------------------------------------

struct Problem {
  std::int64_t m, k, n, lda, ldb, ldc;
};

// Column tiles go in gridDim.x (up to 2^31 - 1), row tiles in gridDim.y, which is capped at 65535: the
// kernels loop over the row tiles beyond it.
dim3 tile_grid(std::int64_t row_tiles, std::int64_t col_tiles) {
  if (col_tiles > INT_MAX)
    throw Error("matmul: n is too large for one grid (" + std::to_string(col_tiles) + " column tiles)");
  return dim3(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min<std::int64_t>(row_tiles, 65535)));
}

// Whether pointer p and leading dimension ld allow 16-byte vector access to every row of a T matrix.
template <class T>
bool vector_aligned(const void* p, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % kVectorWidth<T> == 0;
}

template <class T>
bool all_vector_aligned(const T* a, const T* b, const T* c, const Problem& p) {
  return vector_aligned<T>(a, p.lda) && vector_aligned<T>(b, p.ldb) && vector_aligned<T>(c, p.ldc);
}

// ---- One launcher per stage: its launch configuration in one place ------------------------------

template <class T>
void launch_naive(const T* a, const T* b, T* c, const Problem& p, cudaStream_t stream) {
  const dim3 block(kNaiveBlockCols, kNaiveBlockRows);
  const dim3 grid = tile_grid(ceil_div(p.m, kNaiveBlockRows), ceil_div(p.n, kNaiveBlockCols));
  naive_matmul_kernel<T><<<grid, block, 0, stream>>>(a, b, c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc);
  TANDEM_CUDA_CHECK_LAUNCH();
}

template <class T, int kTile>
void launch_tiled(const T* a, const T* b, T* c, const Problem& p, cudaStream_t stream) {
  const dim3 block(kTile, kTile);
  const dim3 grid = tile_grid(ceil_div(p.m, kTile), ceil_div(p.n, kTile));
  tiled_matmul_kernel<T, kTile><<<grid, block, 0, stream>>>(a, b, c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc);
  TANDEM_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_register_tiled(const T* a, const T* b, T* c, const Problem& p, cudaStream_t stream) {
  using Shape = RegisterTiledShape<T>;
  const dim3 block(kRegisterTiledThreads<Shape>);
  const dim3 grid = tile_grid(ceil_div(p.m, Shape::kBlockRows), ceil_div(p.n, Shape::kBlockCols));
  const auto kernel = all_vector_aligned(a, b, c, p) ? register_tiled_matmul_kernel<T, Shape, true>
                                                     : register_tiled_matmul_kernel<T, Shape, false>;
  kernel<<<grid, block, 0, stream>>>(a, b, c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc);
  TANDEM_CUDA_CHECK_LAUNCH();
}

// Input: Tf32Input (tensor_core_tf32) or Bf16Input (tensor_core_bf16).
template <class Input>
void launch_tensor_core(const float* a, const float* b, float* c, const Problem& p, cudaStream_t stream) {
  using Shape = TensorCoreShape<Input>;
  const dim3 block(Shape::kThreads);
  const dim3 grid = tile_grid(ceil_div(p.m, Shape::kBlockRows), ceil_div(p.n, Shape::kBlockCols));
  const auto kernel = all_vector_aligned(a, b, c, p) ? tensor_core_matmul_kernel<Input, true>
                                                     : tensor_core_matmul_kernel<Input, false>;
  allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), Shape::kSharedBytes);
  kernel<<<grid, block, Shape::kSharedBytes, stream>>>(a, b, c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc);
  TANDEM_CUDA_CHECK_LAUNCH();
}

template <class T>
void run_stage(const StageInfo& info, const T* a, const T* b, T* c, const Problem& p, Workspace& ws,
               cublasHandle_t cublas, cudaStream_t stream) {
  switch (info.stage) {
    case Stage::naive:
      return launch_naive(a, b, c, p, stream);
    case Stage::tiled_16:
      return launch_tiled<T, 16>(a, b, c, p, stream);
    case Stage::tiled_32:
      return launch_tiled<T, 32>(a, b, c, p, stream);
    case Stage::register_tiled:
      return launch_register_tiled(a, b, c, p, stream);
    case Stage::cublas:
      return cublas_matmul(info.name, CublasPrecision::full, a, b, c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc, ws, cublas,
                           stream);
    default:
      break;
  }
  if constexpr (std::is_same_v<T, float>) {
    switch (info.stage) {
      case Stage::tensor_core_tf32:
        return launch_tensor_core<Tf32Input>(a, b, c, p, stream);
      case Stage::tensor_core_bf16:
        return launch_tensor_core<Bf16Input>(a, b, c, p, stream);
      case Stage::wgmma_tf32:
        return wgmma_matmul(WgmmaInput::tf32, a, b, c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc, ws, stream);
      case Stage::wgmma_bf16:
        return wgmma_matmul(WgmmaInput::bf16, a, b, c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc, ws, stream);
      case Stage::cublas_tf32:
        return cublas_matmul(info.name, CublasPrecision::tf32, a, b, c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc, ws, cublas,
                             stream);
      case Stage::cublas_bf16:
        return cublas_matmul(info.name, CublasPrecision::bf16, a, b, c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc, ws, cublas,
                             stream);
      default:
        break;
    }
  }
  throw Error(std::string("matmul kernel '") + info.name + "' is not implemented for " +
              detail::to_string(detail::dtype_of<T>()));
}

std::string valid_stage_list() {
  std::string list;
  for (const StageInfo& info : kStages) list += (list.empty() ? "" : ", ") + std::string(info.name);
  return list;
}

}  // namespace

const std::vector<std::string>& matmul_stage_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const StageInfo& info : kStages) v.emplace_back(info.name);
    return v;
  }();
  return names;
}

std::string auto_matmul_stage(Dtype dtype, std::int64_t m, std::int64_t k, std::int64_t n) {
  if (std::max({m, k, n}) > std::int64_t(INT_MAX)) return "register_tiled";
  const std::int64_t min_dim = std::min({m, k, n});
  for (const AutoRule& rule : kAutoRules)
    if (rule.dtype == dtype && min_dim >= rule.min_dim) return rule.stage;
  return "naive";  // not reached for f32/f64 with m, k, n >= 1
}

void matmul(std::string_view stage, Dtype dtype, const void* a, const void* b, void* c, std::int64_t m, std::int64_t k,
            std::int64_t n, std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws, cublasHandle_t cublas,
            cudaStream_t stream) {
  if (dtype != Dtype::f32 && dtype != Dtype::f64)
    throw Error(std::string("matmul takes f32 or f64, not ") + detail::to_string(dtype));
  const std::string resolved = stage == "auto" ? auto_matmul_stage(dtype, m, k, n) : std::string(stage);
  const auto it = std::find_if(std::begin(kStages), std::end(kStages),
                               [&](const StageInfo& info) { return resolved == info.name; });
  if (it == std::end(kStages))
    throw Error("unknown matmul kernel '" + resolved + "'; valid kernels: auto, " + valid_stage_list());
  if (it->float_only && dtype != Dtype::f32)
    throw Error("matmul kernel '" + resolved + "' supports float only; use register_tiled or cublas for double");

  const Problem p{m, k, n, lda, ldb, ldc};
  if (dtype == Dtype::f32)
    run_stage(*it, static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(c), p, ws, cublas,
              stream);
  else
    run_stage(*it, static_cast<const double*>(a), static_cast<const double*>(b), static_cast<double*>(c), p, ws, cublas,
              stream);
}

}  // namespace tandem::cuda
