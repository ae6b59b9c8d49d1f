// The matmul ladder as backends/cuda/kernels.hpp declares it: one table of stages (name, precision,
// metadata, and one launcher per element type, beside its kernel in the stage's file), the "auto"
// choice, and the dispatch. The stage files (*.cuh beside this one) are parts of this translation unit
// and are included nowhere else; wgmma.cu is compiled apart (sm_90a).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/matmul/chunk_dot.cuh"
#include "backends/cuda/matmul/cublas_gemm.cuh"
#include "backends/cuda/matmul/forms.cuh"
#include "backends/cuda/matmul/hopper.hpp"
#include "backends/cuda/matmul/naive.cuh"
#include "backends/cuda/matmul/params.cuh"
#include "backends/cuda/matmul/register_tiled.cuh"
#include "backends/cuda/matmul/storage16.cuh"
#include "backends/cuda/matmul/tensor_core.cuh"
#include "backends/cuda/matmul/tiled.cuh"
#include "backends/cuda/matmul/wgmma.hpp"
#include "common/dispatch.hpp"

namespace tandem::cuda {
namespace {

using namespace matmul_stages;

template <class T>
using Launcher = void (*)(const GemmParams<T>&, const GemmContext&);
template <class T>
using BatchLauncher = void (*)(const GemmBatch<T>&, const GemmContext&);

// One row per stage, in ladder order. A stage takes the element types it has a launcher for, and
// bfloat16 and float16 wherever it takes float (storage16.cuh: cublas natively, wgmma_bf16 packing them
// itself, the others on A and B widened to float). Stages with batch launchers take transposes, alpha / beta and
// batches themselves; forms.cuh serves the rest.
struct Stage {
  const char* name;
  Precision precision;
  Launcher<float> f32;
  Launcher<double> f64;
  bool deterministic = false;  // each C(i, j) in the canonical order: an fma chain per 4096-k chunk, summed canonically
  bool baseline = false;       // cuBLAS
  const char* requirement = "";
  BatchLauncher<float> f32_batch = nullptr;
  BatchLauncher<double> f64_batch = nullptr;
  // Takes the whole problem of every element type it lists, 16-bit inputs as stored (the Hopper rungs).
  void (*whole)(const detail::MatmulArgs&, Workspace&, cudaStream_t) = nullptr;
};

template <HopperRung R>
void hopper_whole(const detail::MatmulArgs& g, Workspace& ws, cudaStream_t stream) {
  hopper_matmul(R, g, ws, stream);
}

constexpr Stage kStages[] = {
    {"naive", Precision::full, &launch_naive<float>, &launch_naive<double>},
    {"tiled_16", Precision::full, &launch_tiled<float, 16>, &launch_tiled<double, 16>},
    {"tiled_32", Precision::full, &launch_tiled<float, 32>, &launch_tiled<double, 32>},
    {"register_tiled", Precision::full, &launch_register_tiled<float>, &launch_register_tiled<double>, true},
    {"tensor_core_tf32", Precision::tf32, &launch_tensor_core<Tf32Input>, nullptr},
    {"tensor_core_bf16", Precision::bf16, &launch_tensor_core<Bf16Input>, nullptr},
    {"wgmma_tf32", Precision::tf32, &launch_wgmma_tf32, nullptr, false, false, "compute capability 9.0"},
    {"wgmma_bf16", Precision::bf16, &launch_wgmma_bf16, nullptr, false, false, "compute capability 9.0"},
    // The Hopper rungs (hopper.hpp): float inputs as tf32, bfloat16 / half as stored, every form whole.
    {"wgmma_tma", Precision::tf32, &launch_hopper<HopperRung::tma>, nullptr, false, false, "compute capability 9.0",
     &launch_hopper_batch<HopperRung::tma>, nullptr, &hopper_whole<HopperRung::tma>},
    {"wgmma_warp_specialized", Precision::tf32, &launch_hopper<HopperRung::warp_specialized>, nullptr, false, false,
     "compute capability 9.0", &launch_hopper_batch<HopperRung::warp_specialized>, nullptr,
     &hopper_whole<HopperRung::warp_specialized>},
    {"wgmma_persistent", Precision::tf32, &launch_hopper<HopperRung::persistent>, nullptr, false, false,
     "compute capability 9.0", &launch_hopper_batch<HopperRung::persistent>, nullptr,
     &hopper_whole<HopperRung::persistent>},
#ifdef TANDEM_LAB_KERNELS  // stages that have not yet passed on a GPU (none at present) go here
#endif
    {"cublas", Precision::full, &launch_cublas<float>, &launch_cublas<double>, false, true, "",
     &launch_cublas_batch<float>, &launch_cublas_batch<double>},
    {"cublas_tf32", Precision::tf32, &launch_cublas_tf32, nullptr, false, true, "", &launch_cublas_tf32_batch},
    {"cublas_bf16", Precision::bf16, &launch_cublas_bf16, nullptr, false, true, "", &launch_cublas_bf16_batch},
};

template <class T>
Launcher<T> launcher_of(const Stage& s) {
  if constexpr (std::is_same_v<T, float>)
    return s.f32;
  else
    return s.f64;
}
// The stage's launcher for T, or a tandem::Error (the engine checks KernelInfo first).
template <class T>
Launcher<T> checked_launcher(const Stage& s) {
  const Launcher<T> launch = launcher_of<T>(s);
  if (!launch)
    throw Error(std::string("matmul kernel '") + s.name + "' does not take " + to_string(dtype_of<T>) +
                "; use register_tiled or cublas");
  return launch;
}
template <class T>
BatchLauncher<T> batch_launcher_of(const Stage& s) {
  if constexpr (std::is_same_v<T, float>)
    return s.f32_batch;
  else
    return s.f64_batch;
}

// ---- What "auto" runs --------------------------------------------------------------------------
// Only full-precision stages belong here (never tf32/bf16). Measured on an H200, m = k = n = 4096,
// TFLOP/s (median of 15): f32 naive 2.1, tiled_16 8.0, tiled_32 8.0, register_tiled 44.2, cublas 51.1
// (tensor_core_tf32 90, cublas_tf32 392, tensor_core_bf16 153, cublas_bf16 446); f64 tiled_16 4.6,
// register_tiled 18.5, cublas 60.7 (cuBLAS runs f64 on the tensor cores, still full fp64 precision).
// At 1024^3, f32: register_tiled 20.7, cublas 34.1 (register_tiled 30.0 against 34.7 on an H100 since it
// has smaller tiles for small problems, 2026-11-23). cuBLAS was the fastest full-precision stage at every
// size measured, so auto runs it; cuBLAS takes 32-bit sizes, so larger problems go to register_tiled.
// Where MatmulOptions::precision allows it, float products run on cuBLAS's tensor cores: tf32 (410
// TFLOP/s at 4096^3 on an H200) or, where bf16 is allowed too, bf16 (461, the fastest).
// 16-bit inputs run on wgmma_persistent on an H100 / H200 where C has whole 128 x 128 tiles (auto so run
// against cublasGemmEx on an H200, medians of 5: bfloat16 1024^3 0.99x, 2048^3 1.03x, 4096^3 0.98x,
// 8192^3 0.98x, 64 x 512^3 1.07x; half 0.99x, 1.00x, 1.03x, 1.01x, 1.01x), elsewhere on cuBLAS
// (wgmma_persistent on 4096 products of 64^3: 0.84x).
constexpr const char* kAutoStage = "cublas";
constexpr const char* kAutoStage16 = "wgmma_persistent";
constexpr const char* kAutoStageTf32 = "cublas_tf32";
constexpr const char* kAutoStageBf16 = "cublas_bf16";
constexpr const char* kAutoStageBeyondInt32 = "register_tiled";
constexpr const char* kAutoNames[] = {kAutoStage, kAutoStage16, kAutoStageTf32, kAutoStageBf16, kAutoStageBeyondInt32};

const Stage& find_stage(std::string_view name) {
  for (const Stage& s : kStages)
    if (name == s.name) return s;
  std::string list;
  for (const Stage& s : kStages) list += (list.empty() ? "" : ", ") + std::string(s.name);
  throw Error("unknown matmul kernel '" + std::string(name) + "'; valid kernels: auto, " + list);
}

}  // namespace

std::vector<KernelInfo> matmul_stage_info() {
  std::vector<KernelInfo> infos;
  for (const Stage& s : kStages) {
    // register_tiled's default is the canonical fma chain itself; the others have a fixed tiling per GPU
    // model and shape (cuBLAS: the same bits for the same GPU model and library version).
    KernelInfo k{.name = s.name,
                 .precision = s.precision,
                 .deterministic = s.deterministic,
                 .determinism = s.deterministic ? Determinism::every_backend : Determinism::run_to_run,
                 .auto_pick = std::any_of(std::begin(kAutoNames), std::end(kAutoNames),
                                          [&](const char* a) { return s.name == std::string_view(a); }),
                 .baseline = s.baseline,
                 .requirement = s.requirement};
    if (s.f32) k.dtypes.push_back(Dtype::f32);
    if (s.f64) k.dtypes.push_back(Dtype::f64);
    if (s.f32) k.dtypes.insert(k.dtypes.end(), {Dtype::bf16, Dtype::f16});
    infos.push_back(std::move(k));
  }
  return infos;
}

std::string auto_matmul_stage(const detail::MatmulArgs& g) {
  const std::int64_t largest = std::max({g.m, g.k, g.n, g.lda, g.ldb, g.ldc, g.batch});
  if (g.deterministic || largest > std::int64_t(INT_MAX)) return kAutoStageBeyondInt32;
  // 16-bit inputs as stored; products narrower than a 128 x 128 tile (batches of 64 x 64) on cuBLAS.
  if (info(g.dtype).storage) return g.m >= 128 && g.n >= 128 && hopper_runs_here() ? kAutoStage16 : kAutoStage;
  if (g.dtype == Dtype::f32 && g.precision == Precision::bf16) return kAutoStageBf16;
  if (g.dtype == Dtype::f32 && g.precision == Precision::tf32) return kAutoStageTf32;
  return kAutoStage;
}

std::string auto_matmul_stage(Dtype dtype, std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t lda,
                              std::int64_t ldb, std::int64_t ldc) {
  return auto_matmul_stage(detail::MatmulArgs{dtype, nullptr, nullptr, nullptr, m, k, n, lda, ldb, ldc, true});
}

void matmul(std::string_view stage, const detail::MatmulArgs& g, Workspace& ws, const MatmulWorkspaces& forms,
            cublasHandle_t cublas, cudaStream_t stream) {
  const Stage& s = find_stage(stage == "auto" ? std::string_view(auto_matmul_stage(g)) : stage);
  detail::visit(
      g.dtype,
      [&]<class T>(std::type_identity<T>) {
        if constexpr (is_storage_type_v<T>) {
          if (s.whole && g.k > 0 && float(g.alpha) != 0.0f) return s.whole(g, ws, stream);
          if (s.name == std::string_view("cublas") && g.k > 0 && float(g.alpha) != 0.0f)
            return cublas_matmul_16bit(g, GemmContext{ws, cublas, stream});
          // wgmma_bf16 reads one plain product's 16-bit inputs as stored (no float copies).
          if (s.name == std::string_view("wgmma_bf16") && g.plain() && g.k > 0)
            return wgmma_bf16_matmul_16bit(static_cast<const T*>(g.a), static_cast<const T*>(g.b),
                                           static_cast<float*>(g.c), g.m, g.k, g.n, g.lda, g.ldb, g.ldc, ws, stream);
          checked_launcher<float>(s);  // a stage without float takes no 16-bit input either
          return matmul(s.name, widened_problem<T>(g, forms, stream), ws, forms, cublas, stream);
        } else {
          const Launcher<T> launch = checked_launcher<T>(s);
          const GemmBatch<T> batch{GemmParams<T>{static_cast<const T*>(g.a), static_cast<const T*>(g.b),
                                                 static_cast<T*>(g.c), g.m, g.k, g.n, g.lda, g.ldb, g.ldc},
                                   g.trans_a,
                                   g.trans_b,
                                   T(g.alpha),
                                   T(g.beta),
                                   g.batch,
                                   g.stride_a,
                                   g.stride_b,
                                   g.stride_c};
          const GemmContext ctx{ws, cublas, stream};
          if (g.k == 0 || batch.alpha == T(0)) return scale_only(batch, stream);
          // register_tiled (the canonical fma chains) on a narrow or small C: chunk_dot.cuh's kernel, same bits
          if (s.deterministic && chunk_dot_kind(g.m, g.k, g.n) != DotKind::none)
            return chunk_dot_matmul(batch, ctx, forms);
          if (const BatchLauncher<T> whole = batch_launcher_of<T>(s)) return whole(batch, ctx);
          run_as_plain_products(batch, launch, ctx, forms);
        }
      },
      detail::matmul_types{});
}

void matmul(std::string_view stage, Dtype dtype, const void* a, const void* b, void* c, std::int64_t m, std::int64_t k,
            std::int64_t n, std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws, cublasHandle_t cublas,
            cudaStream_t stream) {
  const Stage& s =
      find_stage(stage == "auto" ? std::string_view(auto_matmul_stage(dtype, m, k, n, lda, ldb, ldc)) : stage);
  detail::visit(
      dtype,
      [&]<class T>(std::type_identity<T>) {
        checked_launcher<T>(s)(GemmParams<T>{static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c), m,
                                             k, n, lda, ldb, ldc},
                               GemmContext{ws, cublas, stream});
      },
      type_list<float, double>{});
}

}  // namespace tandem::cuda
