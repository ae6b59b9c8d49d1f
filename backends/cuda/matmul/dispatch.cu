// The matmul ladder as backends/cuda/kernels.hpp declares it: one table of stages (name, precision,
// metadata, and one launcher per element type, beside its kernel in the stage's file), the "auto"
// choice, and the dispatch. The stage files (*.cuh beside this one) are parts of this translation unit
// and are included nowhere else; wgmma.cu is compiled apart (sm_90a).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <span>
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
#include "common/tensor_core.hpp"

namespace tandem::cuda {
namespace {

using namespace matmul_stages;

template <class T>
using Launcher = void (*)(const GemmParams<T>&, const GemmContext&);
template <class T>
using BatchLauncher = void (*)(const GemmBatch<T>&, const GemmContext&);

// What a stage needs beyond a CUDA GPU.
enum class Needs : std::uint8_t { nothing, sm90 };
constexpr const char* words(Needs n) { return n == Needs::sm90 ? "compute capability 9.0" : ""; }

// A launcher of the whole problem (every form, every entry of the batch) for 16-bit inputs as stored.
using Storage16Launcher = void (*)(const detail::MatmulArgs& g, const GemmContext& ctx);
template <class T>
using FewOutputsLauncher = void (*)(const GemmBatch<T>& g, const GemmContext& ctx, const MatmulWorkspaces& forms);
using MixedLauncher = void (*)(const detail::MatmulArgs& g, const GemmContext& ctx, const MatmulWorkspaces& forms);
using GroupedLauncher = void (*)(const detail::MatmulArgs& g, std::span<const std::int64_t> group_rows, Workspace& ws,
                                 cudaStream_t stream);

// One row per stage, in ladder order. A stage takes the element types it has a launcher for, and
// bfloat16 and float16 wherever it takes float: as stored where it has a 16-bit launcher (storage16 for
// every product, storage16_plain for plain ones), else on A and B widened to float (storage16.cuh). Stages
// with batch launchers take transposes, alpha / beta and batches themselves; forms.cuh serves the rest.
struct Stage {
  const char* name;
  Precision rounding = Precision::full;  // what it rounds float inputs to (its KernelInfo: precision_for)
  Launcher<float> f32 = nullptr;
  Launcher<double> f64 = nullptr;
  // Each C(i, j) in the canonical order (an fma chain per 4096-k chunk, summed canonically): deterministic
  // mode may run it, and its default mode gives every backend's bits.
  bool canonical = false;
  bool baseline = false;  // cuBLAS
  Needs needs = Needs::nothing;
  BatchLauncher<float> f32_batch = nullptr;
  BatchLauncher<double> f64_batch = nullptr;
  Storage16Launcher storage16 = nullptr;        // 16-bit inputs as stored, every form
  Storage16Launcher storage16_plain = nullptr;  // 16-bit inputs as stored, plain products (C = A * B)
  // The same chains for a C with few outputs (chunk_dot_kind(m, k, n) != none: narrow, or small with a
  // long K), by a kernel that keeps the GPU busy on them.
  FewOutputsLauncher<float> f32_few_outputs = nullptr;
  FewOutputsLauncher<double> f64_few_outputs = nullptr;
  // Mixed products, their 16-bit operands read as stored and converted as they are loaded (without it: widened
  // into a float copy first, mixed_as_float).
  MixedLauncher mixed = nullptr;
  // A grouped product in one launch over every group's tiles (without it: a product per group).
  GroupedLauncher grouped = nullptr;
};

template <HopperRung R>
void hopper_whole(const detail::MatmulArgs& g, const GemmContext& ctx) {
  hopper_matmul(R, g, ctx.ws, ctx.stream);
}
template <HopperRung R>
void hopper_grouped(const detail::MatmulArgs& g, std::span<const std::int64_t> group_rows, Workspace& ws,
                    cudaStream_t stream) {
  hopper_matmul_grouped(R, g, group_rows, ws, stream);
}
// wgmma_bf16 reads one plain product's 16-bit inputs as stored (no float copies).
void wgmma_bf16_plain(const detail::MatmulArgs& g, const GemmContext& ctx) {
  detail::visit(
      g.dtype,
      [&]<class T>(std::type_identity<T>) {
        wgmma_bf16_matmul_16bit(static_cast<const T*>(g.a), static_cast<const T*>(g.b), static_cast<float*>(g.c), g.m,
                                g.k, g.n, g.lda, g.ldb, g.ldc, ctx.ws, ctx.stream);
      },
      type_list<bfloat16, half>{});
}

constexpr Stage kStages[] = {
    {.name = "naive", .f32 = &launch_naive<float>, .f64 = &launch_naive<double>},
    {.name = "tiled_16", .f32 = &launch_tiled<float, 16>, .f64 = &launch_tiled<double, 16>},
    {.name = "tiled_32", .f32 = &launch_tiled<float, 32>, .f64 = &launch_tiled<double, 32>},
    {.name = "register_tiled",
     .f32 = &launch_register_tiled<float>,
     .f64 = &launch_register_tiled<double>,
     .canonical = true,
     .f32_few_outputs = &chunk_dot_matmul<float>,
     .f64_few_outputs = &chunk_dot_matmul<double>,
     .mixed = &register_tiled_mixed},
    {.name = "tensor_core_tf32", .rounding = Precision::tf32, .f32 = &launch_tensor_core<Tf32Input>},
    {.name = "tensor_core_bf16", .rounding = Precision::bf16, .f32 = &launch_tensor_core<Bf16Input>},
    {.name = "wgmma_tf32", .rounding = Precision::tf32, .f32 = &launch_wgmma_tf32, .needs = Needs::sm90},
    {.name = "wgmma_bf16",
     .rounding = Precision::bf16,
     .f32 = &launch_wgmma_bf16,
     .needs = Needs::sm90,
     .storage16_plain = &wgmma_bf16_plain},
    // The Hopper rungs (hopper.hpp): float inputs as tf32, bfloat16 / half as stored, every form whole.
    {.name = "wgmma_tma",
     .rounding = Precision::tf32,
     .f32 = &launch_hopper<HopperRung::tma>,
     .needs = Needs::sm90,
     .f32_batch = &launch_hopper_batch<HopperRung::tma>,
     .storage16 = &hopper_whole<HopperRung::tma>,
     .grouped = &hopper_grouped<HopperRung::tma>},
    {.name = "wgmma_warp_specialized",
     .rounding = Precision::tf32,
     .f32 = &launch_hopper<HopperRung::warp_specialized>,
     .needs = Needs::sm90,
     .f32_batch = &launch_hopper_batch<HopperRung::warp_specialized>,
     .storage16 = &hopper_whole<HopperRung::warp_specialized>,
     .grouped = &hopper_grouped<HopperRung::warp_specialized>},
    {.name = "wgmma_persistent",
     .rounding = Precision::tf32,
     .f32 = &launch_hopper<HopperRung::persistent>,
     .needs = Needs::sm90,
     .f32_batch = &launch_hopper_batch<HopperRung::persistent>,
     .storage16 = &hopper_whole<HopperRung::persistent>,
     .grouped = &hopper_grouped<HopperRung::persistent>},
    {.name = "wgmma_cluster",
     .rounding = Precision::tf32,
     .f32 = &launch_hopper<HopperRung::cluster>,
     .needs = Needs::sm90,
     .f32_batch = &launch_hopper_batch<HopperRung::cluster>,
     .storage16 = &hopper_whole<HopperRung::cluster>},
    {.name = "wgmma_pingpong",
     .rounding = Precision::tf32,
     .f32 = &launch_hopper<HopperRung::pingpong>,
     .needs = Needs::sm90,
     .f32_batch = &launch_hopper_batch<HopperRung::pingpong>,
     .storage16 = &hopper_whole<HopperRung::pingpong>,
     .grouped = &hopper_grouped<HopperRung::pingpong>},
    {.name = "wgmma_swap_ab",
     .rounding = Precision::tf32,
     .f32 = &launch_hopper<HopperRung::swap_ab>,
     .needs = Needs::sm90,
     .f32_batch = &launch_hopper_batch<HopperRung::swap_ab>},
    {.name = "wgmma_pingpong_swap_ab",
     .rounding = Precision::tf32,
     .f32 = &launch_hopper<HopperRung::pingpong_swap_ab>,
     .needs = Needs::sm90,
     .f32_batch = &launch_hopper_batch<HopperRung::pingpong_swap_ab>},
    {.name = "wgmma_tma_store",
     .rounding = Precision::tf32,
     .f32 = &launch_hopper<HopperRung::tma_store>,
     .needs = Needs::sm90,
     .f32_batch = &launch_hopper_batch<HopperRung::tma_store>,
     .storage16 = &hopper_whole<HopperRung::tma_store>},
    {.name = "cublas",
     .f32 = &launch_cublas<float>,
     .f64 = &launch_cublas<double>,
     .baseline = true,
     .f32_batch = &launch_cublas_batch<float>,
     .f64_batch = &launch_cublas_batch<double>,
     .storage16 = &cublas_matmul_16bit},
    {.name = "cublas_tf32",
     .rounding = Precision::tf32,
     .f32 = &launch_cublas_tf32,
     .baseline = true,
     .f32_batch = &launch_cublas_tf32_batch},
    {.name = "cublas_bf16",
     .rounding = Precision::bf16,
     .f32 = &launch_cublas_bf16,
     .baseline = true,
     .f32_batch = &launch_cublas_bf16_batch},
};
static_assert(
    [] {
      for (const Stage& s : kStages)
        if (s.f32 == nullptr && s.f64 == nullptr) return false;
      return true;
    }(),
    "backends/cuda/matmul/dispatch.cu: every stage needs a launcher");

// The row named `name`, found when this file compiles (a name that is not in the table does not compile).
consteval std::size_t row(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kStages); ++i)
    if (kStages[i].name == name) return i;
  throw "backends/cuda/matmul/dispatch.cu: no stage of that name";
}

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
template <class T>
FewOutputsLauncher<T> few_outputs_of(const Stage& s) {
  if constexpr (std::is_same_v<T, float>)
    return s.f32_few_outputs;
  else
    return s.f64_few_outputs;
}

// ---- What "auto" runs --------------------------------------------------------------------------
// Only full-precision stages belong here (never tf32/bf16). Measured on an H200, m = k = n = 4096,
// TFLOP/s (median of 15): f32 naive 2.1, tiled_16 8.0, tiled_32 8.0, register_tiled 44.2 (45.4 since its
// 128 x 256 tiles, 2026-11-30), cublas 51.1
// (tensor_core_tf32 90, cublas_tf32 392, tensor_core_bf16 153, cublas_bf16 446); f64 tiled_16 4.6,
// register_tiled 18.5, cublas 60.7 (cuBLAS runs f64 on the tensor cores, still full fp64 precision).
// At 1024^3, f32: register_tiled 20.7, cublas 34.1 (register_tiled 30.0 against 34.7 on an H100 since it
// has smaller tiles for small problems, 2026-11-23). cuBLAS was the fastest full-precision stage at every
// size measured, so auto runs it; cuBLAS takes 32-bit sizes, so larger problems go to register_tiled.
// Where MatmulOptions::precision allows it, float products run on cuBLAS's tensor cores: tf32 (410
// TFLOP/s at 4096^3 on an H200) or, where bf16 is allowed too, bf16 (461, the fastest).
// 16-bit inputs: cuBLAS on the data as stored, but for products of 1024 x 1024 to about 2048 x 2048 outputs
// on an H100 / H200, where wgmma_tma was faster or level. Measured on an H200 with the stages' repetitions interleaved
// at random (medians of 9; cuBLAS through the engine, as auto runs it), TFLOP/s bfloat16 / half: 1024^3 cublas 142 /
// 145, best own stage 145 / 144; 2048^3 cublas 479 / 472, wgmma_tma 504 / 528; 4096^3 cublas 698 / 707,
// wgmma_persistent 677 / 676; 8192^3 cublas 717 / 730, best own 726 / 732; 64 x 512^3 cublas 332 / 321,
// wgmma_persistent 304 / 303; 4096 x 64^3 cublas 42 / 43, wgmma_persistent 20 / 20. (An earlier choice of
// wgmma_persistent rested on runs that timed each stage's repetitions one after the other.) With auto on
// cuBLAS at 1024^3 (outputs from 2^21 only), auto measured 121 / 123 against the cublas stage's 134 / 137
// in the same run (cause not found), so 1024^3 ran wgmma_tma (136 / 134). Then wgmma_pingpong (64-row tiles
// in turns) measured, interleaved with cuBLAS (medians of 5): 1024^3 141 / 143 against cublasGemmEx's 125 /
// 128; 4096 x 64^3 43 / 45 against 43 / 42; 2048^3 437 / 440. Three runs on that H200 machine then put
// wgmma_tma below cuBLAS at 2048^3 (428 / 424 against 503 / 480; 450 / 447 against 504 / 510), against the
// earlier run's 504 / 528 over 479 / 472: wgmma_tma's window is closed. So products of 2^20 to 2^21 outputs
// and batches of entries of at most 64 x 64 outputs run wgmma_pingpong, the rest cuBLAS. Then wgmma_tma_store
// (bench_matmul16_h200.json, medians of 5, interleaved), bfloat16 / half against cublasGemmEx and the cublas stage:
// 2048^3 529 / 535 against 507 / 497 and 484 / 500; 2048 x 512 x 2048 233 / 239 against 214 / 201; 2048 x 8192 x 2048
// 710 / 718 against 705 / 700; but 3072^3 531 / 520 against 651 / 636 (its tiles 2.2 waves on 132 SMs) and 4096^3
// 701 / 680 against 709 / 698. So products of 2^21 to 2^22 outputs run wgmma_tma_store where it stores C by the
// copy engine. Deterministic mode runs the canonical stage.
constexpr std::size_t kAutoStage = row("cublas");
constexpr std::size_t kAutoStage16Small = row("wgmma_pingpong");
constexpr std::size_t kAutoStage16Store = row("wgmma_tma_store");
constexpr std::size_t kAutoStageTf32 = row("cublas_tf32");
constexpr std::size_t kAutoStageTf32Swap = row("wgmma_swap_ab");
constexpr std::size_t kAutoStageTf32SwapSmall = row("wgmma_pingpong_swap_ab");
constexpr std::size_t kAutoStageBf16 = row("cublas_bf16");
constexpr std::size_t kAutoStageBeyondInt32 = row("register_tiled");
constexpr std::size_t kAutoStageDeterministic = row("register_tiled");
constexpr std::size_t kAutoStageMixed = row("register_tiled");
// Grouped products of 16-bit inputs in default mode (matmul_grouped): one launch, of 64-row tiles where the groups
// average at most 64 rows.
constexpr std::size_t kAutoStageGrouped = row("wgmma_persistent");
constexpr std::size_t kAutoStageGroupedSmall = row("wgmma_pingpong");
constexpr std::size_t kAutoStages[] = {kAutoStage,      kAutoStage16Small,     kAutoStage16Store,
                                       kAutoStageTf32,  kAutoStageTf32Swap,    kAutoStageTf32SwapSmall,
                                       kAutoStageBf16,  kAutoStageBeyondInt32, kAutoStageDeterministic,
                                       kAutoStageMixed, kAutoStageGrouped,     kAutoStageGroupedSmall};
static_assert(kStages[kAutoStageDeterministic].canonical, "deterministic mode runs a canonical stage");
static_assert(
    [] {
      for (std::size_t i : {kAutoStageGrouped, kAutoStageGroupedSmall})
        if (kStages[i].grouped == nullptr) return false;
      return true;
    }(),
    "auto's grouped stages take grouped products");

bool runs_here(const Stage& s, bool on_device) { return s.needs == Needs::nothing || (on_device && device_is_sm90()); }

}  // namespace

std::vector<KernelInfo> matmul_stage_info(bool on_device) {
  std::vector<KernelInfo> infos;
  for (std::size_t i = 0; i < std::size(kStages); ++i) {
    const Stage& s = kStages[i];
    // register_tiled's default is the canonical fma chain itself; the others have a fixed tiling per GPU
    // model and shape (cuBLAS: the same bits for the same GPU model and library version).
    KernelInfo k{
        .name = s.name,
        .precision = s.rounding,
        .deterministic = s.canonical,
        .determinism = s.canonical ? Determinism::every_backend : Determinism::run_to_run,
        .auto_pick = std::find(std::begin(kAutoStages), std::end(kAutoStages), i) != std::end(kAutoStages),
        .baseline = s.baseline,
        .requirement = words(s.needs),
        .runs_here = runs_here(s, on_device),
        .native_16bit = s.storage16 != nullptr};  // (storage16_plain: wgmma_bf16's bits are the float product's)
    if (s.f32) k.dtypes.push_back(Dtype::f32);
    if (s.f64) k.dtypes.push_back(Dtype::f64);
    if (s.f32) k.dtypes.insert(k.dtypes.end(), {Dtype::bf16, Dtype::f16});
    for (Dtype d : k.dtypes) k.precisions.push_back(precision_for(d, s.rounding));
    infos.push_back(std::move(k));
  }
  return infos;
}

std::size_t auto_matmul_stage(const detail::MatmulArgs& g) {
  // Mixed products with few outputs (a batch of one to four rows against 16-bit weights: register_tiled's
  // chunk_dot) or one C of at most 64 rows or columns (its tiles; a batch would be a launch per entry against
  // cuBLAS's one), which read the 16-bit operand as stored, where precision asks for full float products. On an
  // H200 (bench_cuda, medians of 5), float x bfloat16 1 x 4096 x 14336: 0.067 ms against cuBLAS on the widened
  // weights' 0.530 (and float x float on cuBLAS 0.067); with trans_b 0.065 against 0.539; 4 rows, trans_b, 0.143
  // against 0.565; 64 x 4096 x 4096 0.178 against 0.198; but 4096^3 3.09 against 2.84 (cuBLAS then).
  if (g.mixed() && g.precision == Precision::full &&
      (chunk_dot_kind(g.m, g.k, g.n) != DotKind::none || (std::min(g.m, g.n) <= 64 && g.batch == 1)) &&
      std::max({g.m, g.k, g.n, g.lda, g.ldb, g.ldc, g.batch}) <= std::int64_t(INT_MAX))
    return kAutoStageMixed;
  // Otherwise the float product of the converted operands, float's choice: a 16-bit operand is widened into a
  // compact copy (ld and stride of its packed layout) in a workspace, so that is what the choice looks at.
  if (g.mixed()) return auto_matmul_stage(detail::as_float_product(g, g.a, g.b));
  const std::int64_t largest = std::max({g.m, g.k, g.n, g.lda, g.ldb, g.ldc, g.batch});
  if (g.deterministic) return kAutoStageDeterministic;
  if (largest > std::int64_t(INT_MAX)) return kAutoStageBeyondInt32;
  // 16-bit inputs as stored: wgmma_pingpong for products (or entries) of 2^20 to 2^21 outputs (1024^2 and a
  // little past) and of at most 64 x 64 outputs with K up to 4096 (the rung does not split K); wgmma_tma_store
  // from 2^21 to 2^22 outputs (2048^2; m and n at least 128) with beta 0 and rows of a multiple of 4 columns
  // (hopper_stores_by_tma); else cuBLAS. The choice depends on an entry's shape and the scalars alone, never on the
  // batch's count, C's ld or stride or address: an engine over several GPUs gives each a share of a batch's
  // entries, and an entry's bits must not depend on how many it got or where they lie (wgmma_tma_store runs as
  // wgmma_persistent, with the same bits, where C's rows or entries do not start on 16-byte boundaries).
  if (info(g.dtype).storage) {
    if (!hopper_runs_here()) return kAutoStage;
    const std::int64_t outputs = g.m * g.n;
    if ((g.m >= 128 && g.n >= 128 && outputs >= (std::int64_t(1) << 20) && outputs < (std::int64_t(1) << 21)) ||
        (g.m <= 64 && g.n <= 64 && g.k <= 4096))
      return kAutoStage16Small;
    if (g.m >= 128 && g.n >= 128 && outputs >= (std::int64_t(1) << 21) && outputs <= (std::int64_t(1) << 22) &&
        hopper_stores_by_tma(g))
      return kAutoStage16Store;
    return kAutoStage;
  }
  if (g.dtype == Dtype::f32 && g.precision == Precision::bf16) return kAutoStageBf16;
  if (g.dtype == Dtype::f32 && g.precision == Precision::tf32) {
    // wgmma_swap_ab where it reads a row-major B in place and every dimension is at least 1024; on its 64-row
    // tiles (wgmma_pingpong_swap_ab) below 2^21 outputs, as for 16-bit inputs. On an H200 (bench_cuda, medians
    // of 5, the stages interleaved), against cublas_tf32: 1024^3 0.026 against 0.032 ms, 2048^3 0.054 against
    // 0.066, 4096^3 0.347 against 0.358, 8192^3 2.65 against 2.65; but 8192 x 64 x 8192 0.126 against 0.116
    // (cuBLAS then). Another run (bench_matmul16_h200.json): 1024^3 wgmma_pingpong_swap_ab 0.0200, wgmma_pingpong
    // 0.0216, wgmma_swap_ab 0.0243, cublas_tf32 0.0251; 2048^3 wgmma_pingpong_swap_ab 0.0858 against wgmma_swap_ab's
    // 0.0533.
    if (hopper_runs_here() && std::min({g.m, g.k, g.n}) >= 1024 && hopper_swaps_ab(g))
      return g.m * g.n < (std::int64_t(1) << 21) ? kAutoStageTf32SwapSmall : kAutoStageTf32Swap;
    return kAutoStageTf32;
  }
  return kAutoStage;
}

bool matmul_grouped(const detail::MatmulArgs& g, std::span<const std::int64_t> group_rows, Workspace& ws,
                    cudaStream_t stream) {
  if (!g.resident || g.mixed() || g.deterministic || g.k == 0 || float(g.alpha) == 0.0f || !hopper_runs_here() ||
      std::max({g.m, g.k, g.n, g.lda, g.ldb, g.ldc}) > std::int64_t(INT_MAX) || group_rows.size() > (1u << 20))
    return false;
  std::size_t stage = g.kernel.stage;
  if (g.kernel.is_auto()) {
    if (!info(g.dtype).storage) return false;
    std::int64_t filled = 0;  // (groups with rows)
    for (std::int64_t r : group_rows) filled += r > 0;
    stage = g.m <= 64 * filled ? kAutoStageGroupedSmall : kAutoStageGrouped;
  }
  const GroupedLauncher launch = kStages[stage].grouped;
  if (!launch) return false;
  launch(g, group_rows, ws, stream);
  return true;
}

std::size_t matmul_stage_named(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kStages); ++i)
    if (name == kStages[i].name) return i;
  throw Error("unknown CUDA matmul stage '" + std::string(name) + "'");
}

std::string matmul_stage_name(std::size_t stage) { return kStages[stage].name; }

std::size_t auto_matmul_stage(Dtype dtype, std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t lda,
                              std::int64_t ldb, std::int64_t ldc) {
  return auto_matmul_stage(
      detail::MatmulArgs{.dtype = dtype, .m = m, .k = k, .n = n, .lda = lda, .ldb = ldb, .ldc = ldc, .resident = true});
}

void matmul(std::size_t stage, const detail::MatmulArgs& g, Workspace& ws, const MatmulWorkspaces& forms,
            cublasHandle_t cublas, cudaStream_t stream) {
  const Stage& s = kStages[stage];
  const GemmContext ctx{ws, cublas, stream};
  const bool product = g.k > 0 && float(g.alpha) != 0.0f;
  // (deterministic mode's products in the tensor-core arithmetic, where the precision asks for it)
  auto tensor_core = [&](Dtype as) {
    detail::tensor_core::Format f;
    return g.deterministic && product && detail::tensor_core::canonical_format(as, g.precision, f);
  };
  if (g.mixed()) {
    // (the float product it defines in the tensor-core arithmetic takes the widened operands)
    if (s.mixed && product && !tensor_core(Dtype::f32)) return s.mixed(g, ctx, forms);
    return matmul(stage, mixed_as_float(g, forms, stream), ws, forms, cublas, stream);
  }
  if (tensor_core(g.dtype)) return tensor_core_matmul(g, ws, forms, stream);
  detail::visit(
      g.dtype,
      [&]<class T>(std::type_identity<T>) {
        if constexpr (is_storage_type_v<T>) {
          if (s.storage16 && product) return s.storage16(g, ctx);
          if (s.storage16_plain && g.plain() && g.k > 0) return s.storage16_plain(g, ctx);
          checked_launcher<float>(s);  // a stage without float takes no 16-bit input either
          return matmul(stage, widened_problem<T>(g, forms, stream), ws, forms, cublas, stream);
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
          if (g.k == 0 || batch.alpha == T(0)) return scale_only(batch, stream);
          if (const FewOutputsLauncher<T> few = few_outputs_of<T>(s);
              few && chunk_dot_kind(g.m, g.k, g.n) != DotKind::none)
            return few(batch, ctx, forms);
          if (const BatchLauncher<T> whole = batch_launcher_of<T>(s)) return whole(batch, ctx);
          run_as_plain_products(batch, launch, ctx, forms);
        }
      },
      detail::matmul_types{});
}

void matmul(std::size_t stage, Dtype dtype, const void* a, const void* b, void* c, std::int64_t m, std::int64_t k,
            std::int64_t n, std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws, cublasHandle_t cublas,
            cudaStream_t stream) {
  const Stage& s = kStages[stage];
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
