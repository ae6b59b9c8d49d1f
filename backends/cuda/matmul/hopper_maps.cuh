// The host side of the Hopper rungs' tensor maps (hopper.cu): how the copy engine sees a matrix, and whether it can
// read one where it is.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "backends/cuda/common.cuh"

namespace tandem::cuda::hopper {

inline std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    TANDEM_CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw Error(
          "tandem: the CUDA driver has no cuTensorMapEncodeTiled (needed by the Hopper matmul kernels wgmma_tma and "
          "the rungs after it); update the NVIDIA driver or use wgmma_bf16 / cublas");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// A matrix as a tensor map sees it: `batch` entries of rows x cols, cols contiguous.
struct View {
  const void* base;
  std::int64_t rows, cols, ld, stride;
};

inline CUtensorMap tensor_map(CUtensorMapDataType type, int elem_bytes, const View& v, std::int64_t batch, int box_cols,
                              int box_rows) {
  CUtensorMap map{};
  const cuuint64_t dims[3] = {cuuint64_t(v.cols), cuuint64_t(v.rows), cuuint64_t(batch)};
  const cuuint64_t strides[2] = {cuuint64_t(v.ld * elem_bytes),
                                 cuuint64_t((batch > 1 ? v.stride : v.rows * v.ld) * elem_bytes)};
  const cuuint32_t box[3] = {cuuint32_t(box_cols), cuuint32_t(box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = tensor_map_encoder()(&map, type, 3, const_cast<void*>(v.base), dims, strides, box, element_strides,
                                          CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error("tandem: encoding a tensor map for the Hopper matmul kernels failed (CUresult " +
                std::to_string(int(r)) + ")");
  return map;
}

// Whether the copy engine can read the matrix where it is: 16-byte aligned rows and entries.
inline bool readable(const void* p, std::int64_t ld, std::int64_t stride, std::int64_t batch, int elem_bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (ld * elem_bytes) % 16 == 0 &&
         (batch == 1 || (stride > 0 && (stride * elem_bytes) % 16 == 0));
}

}  // namespace tandem::cuda::hopper
