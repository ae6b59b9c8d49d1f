// The kernel ladders as the CUDA backend calls them. Validation happened in the engine: every call
// here has n >= 1 (reductions) or m, k, n >= 1 (matmul), stride >= 1, lda >= k, ldb >= n, ldc >= n,
// and every pointer is device memory valid for the extent it describes.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/common.cuh"

namespace tandem::cuda {

// ---- Reductions (backends/cuda/reduce/) --------------------------------------------------------
// Stages are rows of reduce/stages.cuh's table, numbered in ladder order (a KernelId's stage).
// Every stage in ladder order, "cub" last, with what it accepts; without "auto".
std::vector<KernelInfo> reduce_stage_info();
// The stage "auto" runs for this problem.
std::size_t auto_reduce_stage(Op op, Dtype dtype, std::int64_t n, std::int64_t stride);
// The stage a call runs: the one `kernel` names, or auto's choice for this problem.
std::size_t reduce_stage(detail::KernelId kernel, Op op, Dtype dtype, std::int64_t n, std::int64_t stride);
// The stage of that name (the benchmarks' kernel level), or tandem::Error; and a stage's name.
std::size_t reduce_stage_named(std::string_view name);
std::string reduce_stage_name(std::size_t stage);
// Reduces x[0], x[stride], ..., x[(n-1)*stride] with `stage` and writes the accumulator of op's operator
// (common/reduce_ops.hpp: uint64 for integer sums, wrapping; compute_t for values; an ArgAcc)
// to the device pointer d_result.
void reduce(std::size_t stage, Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* d_result,
            Workspace& ws, cudaStream_t stream);
// Whether `stage` stores the op's result into a Buffer element itself, as detail::store_result writes it
// (a *_into call in one launch; `divide`: a mean, divided by n), and that launch.
bool reduce_stores_into(std::size_t stage);
void reduce_into(std::size_t stage, Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* out,
                 bool divide, Workspace& ws, cudaStream_t stream);
// single_pass's: its last block stores the result.
void reduce_single_pass_into(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* out,
                             bool divide, Workspace& ws, cudaStream_t stream);

// Deterministic mode's value of an op in the canonical order of common/canonical.hpp (sum; sumsq: of the
// squares; prod) of a floating dtype, as the dtype's compute type.
void reduce_canonical_sum(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* d_result,
                          Workspace& ws, cudaStream_t stream);

// Writes op's result for an empty input (its EmptyRule: 0 or 1, as detail::store_result stores it) to
// out[0 .. count), device memory, on `stream`.
void fill_empty_results(Op op, Dtype dtype, void* out, std::int64_t count, cudaStream_t stream);

// The engine's elementwise pass of SelectArgs (common/backend.hpp) on `stream` (backends/cuda/select.cu).
void select(const detail::SelectArgs& args, cudaStream_t stream);
// The largest k topk.cu selects (its sort of the k is in shared memory); past it lines are sorted (sort_lines).
inline constexpr std::int64_t kTopkSelectMaxK = 1024;
// Top-k (and argsort: args.argsort) of TopkArgs on `stream` (backends/cuda/topk.cu: a selection for k <= 1024;
// ws: the pieces' results of lines longer than shared memory holds); the rest by sort_lines. False (nothing
// enqueued) for lines longer than sort_lines takes.
bool topk(const detail::TopkArgs& args, Workspace& ws, cudaStream_t stream);
// Each line of TopkArgs sorted whole (backends/cuda/sort_lines.cu: CUB's segmented sort), its first k written;
// false (nothing enqueued) for lines longer than 2^30 elements.
bool sort_lines(const detail::TopkArgs& args, Workspace& ws, cudaStream_t stream);

// Step 1-3 of the canonical order only: the value of every 4096-element chunk of x (n elements, stride)
// into values[0 .. ceil(n / 4096)). A host input staged in pieces whose lengths are multiples of 4096
// gets its chunk values piece by piece, then reduce_canonical_sum(canonical::chunk_values_op(op), ...) over all
// of them finishes it.
void reduce_canonical_chunk_values(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* values,
                                   cudaStream_t stream);

// ---- Matrix products (backends/cuda/matmul/) ---------------------------------------------------
// Stages are rows of matmul/dispatch.cu's table, numbered in ladder order (a KernelId's stage).
// Every stage in ladder order, cuBLAS last, with what it accepts; without "auto". on_device: whether each
// runs on the current GPU (KernelInfo::runs_here; without a device: whether it needs nothing more).
std::vector<KernelInfo> matmul_stage_info(bool on_device);
// The stage "auto" runs for the whole problem: the canonical stage (register_tiled) in deterministic mode
// or past 32-bit sizes, else cuBLAS in the lowest precision MatmulArgs::precision allows (tf32 / bf16:
// float only), but on an H100 / H200 the own stages where they measured faster or level: 16-bit inputs as stored
// on wgmma_pingpong or wgmma_tma_store, float products at tf32 on the swap_ab rungs (matmul/dispatch.cu says
// which shapes).
std::size_t auto_matmul_stage(const detail::MatmulArgs& g);
// The same for a plain product in full precision (the benchmarks).
std::size_t auto_matmul_stage(Dtype dtype, std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t lda,
                              std::int64_t ldb, std::int64_t ldc);
// The stage of that name (the benchmarks' kernel level), or tandem::Error; and a stage's name.
std::size_t matmul_stage_named(std::string_view name);
std::string matmul_stage_name(std::size_t stage);

// Scratch memory for the GEMM forms (matmul/forms.cuh), apart from the stages' workspace.
struct MatmulWorkspaces {
  Workspace& op_a;
  Workspace& op_b;
  Workspace& product;
  Workspace& wide_a;  // 16-bit A and B widened to float (matmul/storage16.cuh)
  Workspace& wide_b;
  // A mixed product's 16-bit operand widened to float (mixed_as_float): apart from every workspace above, which
  // the float product it becomes may use (deterministic mode's tf32 packing writes into wide_a / wide_b).
  Workspace& mixed_a;
  Workspace& mixed_b;
};
// C = alpha * op(A) * op(B) + beta * C for every entry of g (device memory; m, n, batch >= 1, k >= 0) with
// `stage`: stages with batch launchers take the whole problem, the others one plain product per entry
// (matmul/forms.cuh).
void matmul(std::size_t stage, const detail::MatmulArgs& g, Workspace& ws, const MatmulWorkspaces& forms,
            cublasHandle_t cublas, cudaStream_t stream);
// A deterministic product in the tensor-core arithmetic (16-bit inputs; float inputs where g.precision allows
// tf32: common/tensor_core.hpp), k >= 1 and alpha != 0: on wgmma on an H100 / H200, else by emulating the
// k-step (matmul/tensor_core_canonical.cu). matmul() runs it for every such product, whatever the stage.
void tensor_core_matmul(const detail::MatmulArgs& g, Workspace& ws, const MatmulWorkspaces& forms, cudaStream_t stream);
// A grouped product (BackendImpl::matmul_grouped: A and C whole, B one entry per group or stride 0, group_rows each
// group's rows) in one launch of a Hopper rung over every group's tiles (matmul/hopper.cu), where the stage
// (g.kernel) is one that takes it: wgmma_tma, wgmma_warp_specialized, wgmma_persistent or wgmma_pingpong, or auto
// for 16-bit inputs in default mode (wgmma_pingpong where the groups average at most 64 rows, else
// wgmma_persistent); device memory, k >= 1, alpha != 0, sizes below 2^31, an H100 / H200. false (nothing
// enqueued) otherwise.
bool matmul_grouped(const detail::MatmulArgs& g, std::span<const std::int64_t> group_rows, Workspace& ws,
                    cudaStream_t stream);

// The plain product of one entry (the benchmarks' kernel level):
// C (m x n, ldc) = A (m x k, lda) * B (k x n, ldb), row-major, dtype f32 or f64. Throws tandem::Error
// for a stage whose KernelInfo does not take the dtype (tensor-core stages take float only).
void matmul(std::size_t stage, Dtype dtype, const void* a, const void* b, void* c, std::int64_t m, std::int64_t k,
            std::int64_t n, std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws, cublasHandle_t cublas,
            cudaStream_t stream);

}  // namespace tandem::cuda
