// Stages 7 and 8, wgmma_tf32 and wgmma_bf16: Hopper's warpgroup matrix multiply-accumulate (wgmma, sm_90a),
// the instruction cuBLAS runs on an H100/H200. The tensor_core_* stages (WMMA) use the warp-level
// mma.sync; these stages change three things:
//   1. The unit of work is a warpgroup (4 warps, 128 threads) and one instruction multiplies a 64 x n x k
//      tile (n = BN, k = 32 bytes of input: 8 tf32 or 16 bf16) with both operands read by the tensor
//      cores straight from shared memory (through 64-bit "matrix descriptors"), asynchronously: the
//      threads issue the multiplies, go on, and wait for them later (wgmma.commit_group / wait_group).
//   2. Shared memory holds the tiles in the layout the descriptors describe: rows of 128 bytes, K-major
//      (k along the row), in the 128-byte swizzle (the 16-byte chunk c of row r is stored at chunk
//      c ^ (r % 8)), so that the tensor cores read them without bank conflicts.
//   3. A multi-stage cp.async pipeline keeps kStages k-tiles in flight while the tensor cores work.
// wgmma reads tf32 only K-major for both operands, and the rows of B (k x n, row-major) run along n, so
// the stage first "packs" B, transposed, in the workspace as B' (N' x K'): rounded to the input type once
// (tf32: to nearest, ties away; bf16: to nearest even) and zero-padded to whole tiles. A is read where it
// is when it holds the input type already and its rows allow 16-byte copies: float A for tf32 (lda and k
// multiples of 4, A 16-byte aligned; the tensor cores then drop A's low 13 mantissa bits instead of
// rounding them), a stored bfloat16 A for bf16 (multiples of 8); otherwise it is packed the same way
// (M' x K'). The inputs are floats, or (wgmma_bf16_matmul_16bit) bfloat16 / half as stored. Rows and
// chunks of K past A's end are zero-filled by cp.async, never read, so any m, k, n, lda, ldb and
// alignment work and only the stores of C check a bound (two columns per 8-byte store where C allows).
// Packing B costs about 40 us per 4096 x 4096 float matrix on an H200 and is part of the stage's time.
// Only the GPUs of compute capability 9.0 (H100, H200) run sm_90a code: elsewhere the stages throw.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "backends/cuda/common.cuh"
#include "backends/cuda/matmul/hopper_ptx.cuh"
#include "backends/cuda/matmul/wgmma.hpp"
#include "backends/cuda/matmul/wgmma_ops.cuh"

namespace tandem::cuda::wgmma_stages {

// ---- Input types ---------------------------------------------------------------------------------------

struct Tf32Wgmma {
  using Element = std::uint32_t;  // a float rounded to tf32 (the low 13 mantissa bits zero)
  __device__ static Element convert(float x) {
    std::uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
  }
};
struct Bf16Wgmma {
  using Element = __nv_bfloat16;
  __device__ static Element convert(float x) { return __float2bfloat16_rn(x); }
};

namespace {

// ---- Tile shapes ------------------------------------------------------------------------------------
// A block computes a 128 x BN tile of C with 2 warpgroups, each 64 rows x BN columns (the accumulators:
// 64 * BN / 128 = BN / 2 floats per thread; one m64nBNk instruction per k-step). A k-tile is 128 bytes of
// K (32 tf32, 64 bf16): one swizzled row. Shared memory per stage: (128 + BN) rows of 128 bytes. The
// shapes (choose_shape): 128 x 256, 128 x 128 and 128 x 64 with as many stages as fit in 192 KiB (of the
// 227 KiB a block may have; one block per SM), and 128 x 64 with 4 stages (two blocks per SM) for a short
// K. Measured on an H200 at 4096^3 (TFLOP/s, tf32 / bf16): 128 x 256 323 / 437, 128 x 128 259 / 380,
// 128 x 64 167 / 276: the wide tile is the fastest per tile, the narrow ones give more blocks where C has
// few tiles.
constexpr int kBlockM = 128;
constexpr int kThreads = 256;
constexpr int kRowBytes = 128;
template <int BN, int Stages>
struct TileShape {
  static constexpr int kStageBytes = (kBlockM + BN) * kRowBytes;
  static constexpr int kSharedBytes = Stages * kStageBytes + 1024;  // + 1024: the base is aligned up to 1024
  static_assert(Stages >= 3 && kSharedBytes <= 227 * 1024);
};
constexpr int kGroupM = 8;  // tiles of C are visited in groups of 8 tile rows, for the L2 cache
template <class Input>
constexpr int kTileK = kRowBytes / int(sizeof(typename Input::Element));  // elements of K per k-tile

// ---- PTX helpers ---------------------------------------------------------------------------------------
// The wgmma fences, commit and wait, and the shared-memory addresses and descriptors come from
// hopper_ptx.cuh, the instructions themselves from wgmma_ops.cuh; the cp.async pipeline is this file's own.
using hopper::fence_registers;
using hopper::shared_address;
using hopper::wgmma_commit;
using hopper::wgmma_fence;
using hopper::wgmma_wait;

// The matrix descriptor of a K-major tile in the 128-byte swizzle starting at shared address `addr`
// (1024-byte aligned for the first of 8 rows): the leading byte offset is unused by this layout (16 bytes:
// the field holds 1), the stride is 1024 bytes (from one group of 8 rows to the next). Stepping along K
// inside the 128-byte row adds the byte offset to the address; the hardware applies the swizzle.
__device__ __forceinline__ std::uint64_t descriptor(std::uint32_t addr) { return hopper::descriptor(addr, 16, 1024); }

// One m64nNk instruction for the input type, A and B K-major.
template <class Input, int N>
__device__ __forceinline__ void wgmma(float (&d)[N / 2], std::uint64_t a, std::uint64_t b) {
  constexpr hopper::WgmmaType type =
      std::is_same_v<Input, Tf32Wgmma> ? hopper::WgmmaType::tf32 : hopper::WgmmaType::bf16;
  hopper::wgmma_ss<type, N, false>(d, a, b);
}

__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
// The same, or 16 zero bytes (nothing read) when `copy` is false.
__device__ __forceinline__ void cp_async_16_or_zero(std::uint32_t dst, const void* src, bool copy) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(copy ? 16 : 0) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
// Makes this thread's shared-memory writes (cp.async is the generic proxy) visible to wgmma (the async proxy).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// ---- Packing ---------------------------------------------------------------------------------------------

// dst (rows_p x cols_p, packed) = src (rows x cols, ld) converted, zero past rows and cols: A. One row
// per block at a time. Src: float, or a 16-bit storage type (read as the float it holds).
template <class Input, class Src>
__global__ void __launch_bounds__(256)
    pack_kernel(const Src* __restrict__ src, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                typename Input::Element* __restrict__ dst, std::int64_t rows_p, std::int64_t cols_p) {
  for (std::int64_t r = blockIdx.x; r < rows_p; r += gridDim.x)
    for (std::int64_t c = threadIdx.x; c < cols_p; c += blockDim.x)
      dst[r * cols_p + c] = Input::convert(r < rows && c < cols ? float(src[r * ld + c]) : 0.0f);
}

// dst (cols_p x rows_p, packed) = transpose of src (rows x cols, ld) converted, zero-padded: B (k x n)
// becomes N' x K'. 32 x 32 tiles through shared memory, so that reads and writes are both coalesced.
template <class Input, class Src>
__global__ void __launch_bounds__(256)
    pack_transposed_kernel(const Src* __restrict__ src, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                           typename Input::Element* __restrict__ dst, std::int64_t rows_p, std::int64_t cols_p) {
  __shared__ float tile[32][33];
  const std::int64_t tiles_c = cols_p / 32;
  const std::int64_t r0 = std::int64_t(blockIdx.x) * 32;  // rows of src = columns of dst (K)
  for (std::int64_t tc = blockIdx.y; tc < tiles_c; tc += gridDim.y) {
    const std::int64_t c0 = tc * 32;
    for (int y = threadIdx.y; y < 32; y += 8) {
      const std::int64_t r = r0 + y, c = c0 + threadIdx.x;
      tile[y][threadIdx.x] = r < rows && c < cols ? float(src[r * ld + c]) : 0.0f;
    }
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += 8)
      dst[(c0 + y) * rows_p + r0 + threadIdx.x] = Input::convert(tile[threadIdx.x][y]);
    __syncthreads();
  }
}

// ---- The main kernel ------------------------------------------------------------------------------------

// C (m x n, ldc) = A * B'^T, B' (n_p x k_p) packed, K-major. A is packed like B' (a_rows = m_p,
// a_cols = k_p, lda = k_p) or, for tf32, the caller's own matrix (a_rows = m, a_cols = k, a multiple of 4,
// lda): its rows and 16-byte chunks past a_rows and a_cols are zero-filled by cp.async instead of read.
template <class Element>
struct WgmmaParams {
  const Element* a;  // A as described above: a_rows x a_cols, lda
  std::int64_t a_rows, a_cols, lda;
  const Element* b;  // B packed transposed: n_p x k_p
  float* c;          // C: m x n, ldc
  std::int64_t m, n, k_p, ldc;
  std::int64_t tiles_m, tiles_n;  // tiles of C
  bool c_pairs;                   // C 8-byte aligned with ldc even: two neighbouring columns as one float2
};

template <class Input, int BN, int Stages>
__global__ void __launch_bounds__(kThreads, 1) wgmma_matmul_kernel(const WgmmaParams<typename Input::Element> p) {
  using Element = typename Input::Element;
  constexpr int kBlockN = BN, kStages = Stages, kStageBytes = TileShape<BN, Stages>::kStageBytes;
  const Element* __restrict__ const a = p.a;
  const Element* __restrict__ const b = p.b;
  float* __restrict__ const c = p.c;
  const std::int64_t a_rows = p.a_rows, a_cols = p.a_cols, lda = p.lda, m = p.m, n = p.n, k_p = p.k_p, ldc = p.ldc;
  const std::int64_t tiles_m = p.tiles_m, tiles_n = p.tiles_n;
  constexpr int kStepBytes = 32;  // K bytes per wgmma instruction
  constexpr int kAccumulators = kBlockN / 2;
  constexpr int kElementsPerChunk = 16 / int(sizeof(Element));
  constexpr int kTileElements = kRowBytes / int(sizeof(Element));  // K per k-tile

  extern __shared__ unsigned char shared_raw[];
  const std::uint32_t shared_base = (shared_address(shared_raw) + 1023) & ~1023u;

  // Which tile of C: groups of kGroupM tile rows, column-major inside a group.
  const std::int64_t tile = blockIdx.x;
  const std::int64_t per_group = std::int64_t(kGroupM) * tiles_n;
  const std::int64_t first_m = tile / per_group * kGroupM;
  const std::int64_t group_rows = std::min<std::int64_t>(tiles_m - first_m, kGroupM);
  const std::int64_t tile_m = first_m + tile % per_group % group_rows;
  const std::int64_t tile_n = tile % per_group / group_rows;

  const int tid = threadIdx.x;
  const std::int64_t k_tiles = k_p / kTileElements;

  // Stage s: A rows [0, kBlockM) then B rows [0, kBlockN), 128 swizzled bytes each. Thread t copies the
  // 16-byte chunks t, t + 256, ...: 8 neighbouring threads read one row's 128 bytes. Where each of its
  // chunks comes from (k-tile 0) and goes to (stage 0) is worked out once, before the loop.
  constexpr int kChunks = (kBlockM + kBlockN) * 8 / kThreads;
  const char* src[kChunks];
  std::uint32_t dst[kChunks];
  std::int64_t k_first[kChunks];  // the chunk's first element of K in k-tile 0
  bool row_inside[kChunks];
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    const int chunk = tid + i * kThreads;
    const int row = chunk / 8, col = chunk % 8;
    dst[i] = row * kRowBytes + ((col ^ (row % 8)) * 16);
    k_first[i] = col * kElementsPerChunk;
    if (row < kBlockM) {
      const std::int64_t r = tile_m * kBlockM + row;
      row_inside[i] = r < a_rows;
      src[i] = reinterpret_cast<const char*>(a + (row_inside[i] ? r : 0) * lda + k_first[i]);
    } else {
      row_inside[i] = true;
      src[i] = reinterpret_cast<const char*>(b + (tile_n * kBlockN + row - kBlockM) * k_p + k_first[i]);
    }
  }
  auto load_tile = [&](std::int64_t kt, int s) {
    const std::uint32_t stage = shared_base + s * kStageBytes;
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      if (i * kThreads < kBlockM * 8) {  // a chunk of A: zero past A's rows and columns
        const bool inside = row_inside[i] && kt * kTileElements + k_first[i] < a_cols;
        cp_async_16_or_zero(stage + dst[i], inside ? src[i] + kt * kRowBytes : src[i], inside);
      } else {
        cp_async_16(stage + dst[i], src[i] + kt * kRowBytes);
      }
    }
  };

  float d[kAccumulators];
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) d[i] = 0.0f;

    // Prologue: k-tiles 0 .. kStages - 3 in flight. The loop keeps kStages - 2 ahead: the stage it refills
    // was read by the wgmma of two iterations ago, which every warpgroup has waited for (wait_group 1)
    // before the __syncthreads of this iteration.
#pragma unroll
  for (int s = 0; s < kStages - 2; ++s) {
    if (s < k_tiles) load_tile(s, s);
    cp_async_commit();
  }
  const int warpgroup = tid / 128;
  for (std::int64_t kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 3>();  // this thread's copies of k-tile kt have landed
    fence_proxy_async();
    __syncthreads();  // everybody's have, and stage (kt - 2) % kStages is free

    const std::uint32_t stage = shared_base + int(kt % kStages) * kStageBytes;
    const std::uint32_t a_tile = stage + warpgroup * 64 * kRowBytes;
    const std::uint32_t b_tile = stage + kBlockM * kRowBytes;
    fence_registers(d);
    wgmma_fence();
#pragma unroll
    for (int step = 0; step < kRowBytes / kStepBytes; ++step)
      wgmma<Input, kBlockN>(d, descriptor(a_tile + step * kStepBytes), descriptor(b_tile + step * kStepBytes));
    wgmma_commit();
    // While the tensor cores work: the copies of k-tile kt + kStages - 2.
    if (kt + kStages - 2 < k_tiles) load_tile(kt + kStages - 2, int((kt + kStages - 2) % kStages));
    cp_async_commit();
    wgmma_wait<1>();
    fence_registers(d);
  }
  wgmma_wait<0>();
  fence_registers(d);

  // Accumulator layout (per warp of the warpgroup, 16 rows): d[4j + {0,1}] at row lane / 4, columns
  // 8j + 2 (lane % 4) + {0,1}; d[4j + {2,3}] the same 8 rows further down.
  const int warp = (tid % 128) / 32, lane = tid % 32;
  const std::int64_t row0 = tile_m * kBlockM + warpgroup * 64 + warp * 16 + lane / 4;
  const std::int64_t col0 = tile_n * kBlockN + 2 * (lane % 4);
#pragma unroll
  for (int j = 0; j < kBlockN / 8; ++j)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::int64_t row = row0 + 8 * half, col = col0 + 8 * j;
      if (row >= m) continue;
      float* out = c + row * ldc + col;
      if (p.c_pairs && col + 1 < n) {  // col is even: one 8-byte store (half the store instructions)
        *reinterpret_cast<float2*>(out) = make_float2(d[4 * j + 2 * half], d[4 * j + 2 * half + 1]);
        continue;
      }
      if (col < n) out[0] = d[4 * j + 2 * half];
      if (col + 1 < n) out[1] = d[4 * j + 2 * half + 1];
    }
}

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

template <class Input, int BN, int Stages, class Src>
void run_shape(const char* name, const Src* a, const Src* b, float* c, std::int64_t m, std::int64_t k, std::int64_t n,
               std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws, cudaStream_t stream) {
  using Element = typename Input::Element;
  using Shape = TileShape<BN, Stages>;
  constexpr int kBlockN = BN;
  const std::int64_t m_p = round_up(m, kBlockM), n_p = round_up(n, kBlockN), k_p = round_up(k, kTileK<Input>);
  const std::int64_t tiles_m = m_p / kBlockM, tiles_n = n_p / kBlockN;
  if (tiles_m * tiles_n > 0x7FFFFFFF) throw Error(std::string("matmul kernel '") + name + "': too many tiles of C");
  // A is read where it is when it holds the input type already (float for tf32: the tensor cores then
  // ignore the low 13 mantissa bits instead of rounding them; stored bfloat16 for bf16) and its rows are
  // 16-byte aligned with whole 16-byte chunks of K; otherwise A is packed too.
  constexpr bool same_type =
      std::is_same_v<Input, Tf32Wgmma> ? std::is_same_v<Src, float> : std::is_same_v<Src, bfloat16>;
  constexpr int kPerChunk = 16 / int(sizeof(Src));
  const bool direct_a =
      same_type && reinterpret_cast<std::uintptr_t>(a) % 16 == 0 && lda % kPerChunk == 0 && k % kPerChunk == 0;
  const std::size_t a_bytes = direct_a ? 0 : std::size_t(m_p * k_p) * sizeof(Element);
  const std::size_t b_offset = (a_bytes + 255) / 256 * 256;
  auto* scratch = static_cast<unsigned char*>(ws.get(b_offset + std::size_t(n_p * k_p) * sizeof(Element)));
  auto* b_packed = reinterpret_cast<Element*>(scratch + b_offset);
  const Element* a_tiles = reinterpret_cast<const Element*>(a);
  std::int64_t a_rows = m, a_cols = k, a_ld = lda;
  if (!direct_a) {
    auto* a_packed = reinterpret_cast<Element*>(scratch);
    pack_kernel<Input, Src>
        <<<unsigned(std::min<std::int64_t>(m_p, 65535)), 256, 0, stream>>>(a, m, k, lda, a_packed, m_p, k_p);
    TANDEM_CUDA_CHECK_LAUNCH();
    a_tiles = a_packed, a_rows = m_p, a_cols = k_p, a_ld = k_p;
  }
  // B (k x n) -> B' (n_p x k_p): blockIdx.x over the 32-row tiles of B (k_p / 32, at most 2^31 - 1),
  // blockIdx.y over its 32-column tiles (looping past 65535).
  const dim3 transpose_grid(unsigned(k_p / 32), unsigned(std::min<std::int64_t>(n_p / 32, 65535)));
  pack_transposed_kernel<Input, Src><<<transpose_grid, dim3(32, 8), 0, stream>>>(b, k, n, ldb, b_packed, k_p, n_p);
  TANDEM_CUDA_CHECK_LAUNCH();

  const auto kernel = wgmma_matmul_kernel<Input, BN, Stages>;
  allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), Shape::kSharedBytes);
  kernel<<<unsigned(tiles_m * tiles_n), kThreads, Shape::kSharedBytes, stream>>>(
      WgmmaParams<Element>{a_tiles, a_rows, a_cols, a_ld, b_packed, c, m, n, k_p, ldc, tiles_m, tiles_n,
                           reinterpret_cast<std::uintptr_t>(c) % 8 == 0 && ldc % 2 == 0});
  TANDEM_CUDA_CHECK_LAUNCH();
}

// The tile shapes a launch may take: the width of a tile of C and its launcher (run_shape, which fixes
// the stage count), with the speed per tile relative to 128 x 256 (the 4096^3 tf32 measurements above).
template <class Input, class Src>
struct ShapeChoice {
  int block_n;
  double relative_speed;
  void (*launch)(const char*, const Src*, const Src*, float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                 std::int64_t, std::int64_t, Workspace&, cudaStream_t);
};
template <class Input, class Src>
constexpr ShapeChoice<Input, Src> kWideShapes[] = {{256, 1.0, &run_shape<Input, 256, 4, Src>},
                                                   {128, 0.8, &run_shape<Input, 128, 6, Src>},
                                                   {64, 0.5, &run_shape<Input, 64, 8, Src>}};
template <class Input, class Src>
constexpr ShapeChoice<Input, Src> kShortKShape{64, 0.0, &run_shape<Input, 64, 4, Src>};

// The tile shape for C (m x n) and k_tiles k-tiles. A short K (4 k-tiles or fewer) takes 128 x 64 tiles
// with 4 stages, two blocks per SM: one block's loads and stores of C overlap the other's work (8192 x 64
// x 8192 on an H200, tf32: 36.4 TFLOP/s against 34.9 for 128 x 128 with 3 stages, 32.7 for 128 x 256 with
// 4). Otherwise the width: 256 is the fastest per tile, but where C has few tiles a narrower one keeps
// more SMs busy; each shape's estimate is its relative speed times the busy fraction of its waves:
// tiles / (waves * SMs).
template <class Input, class Src>
const ShapeChoice<Input, Src>& choose_shape(std::int64_t m, std::int64_t n, std::int64_t k_tiles, int sms) {
  if (k_tiles <= 4) return kShortKShape<Input, Src>;
  const ShapeChoice<Input, Src>* best = nullptr;
  double best_rate = 0;
  for (const ShapeChoice<Input, Src>& shape : kWideShapes<Input, Src>) {
    const std::int64_t tiles = round_up(m, kBlockM) / kBlockM * (round_up(n, shape.block_n) / shape.block_n);
    const std::int64_t waves = (tiles + sms - 1) / sms;
    const double rate = shape.relative_speed * double(tiles) / double(waves * sms);
    if (!best || rate > best_rate) best = &shape, best_rate = rate;
  }
  return *best;
}

template <class Input, class Src>
void run(const char* name, const Src* a, const Src* b, float* c, std::int64_t m, std::int64_t k, std::int64_t n,
         std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws, cudaStream_t stream) {
  if (!device_is_sm90())
    throw Error(std::string("matmul kernel '") + name +
                "' needs a GPU of compute capability 9.0 (H100, H200): it runs Hopper's wgmma instructions; use "
                "tensor_core_tf32 / tensor_core_bf16 on other GPUs");
  const std::int64_t k_tiles = round_up(k, kTileK<Input>) / kTileK<Input>;
  choose_shape<Input, Src>(m, n, k_tiles, multiprocessor_count())
      .launch(name, a, b, c, m, k, n, lda, ldb, ldc, ws, stream);
}

}  // namespace
}  // namespace tandem::cuda::wgmma_stages

namespace tandem::cuda {

void wgmma_matmul(WgmmaInput input, const matmul_stages::GemmParams<float>& p, Workspace& ws, cudaStream_t stream) {
  using namespace wgmma_stages;
  if (input == WgmmaInput::tf32)
    run<Tf32Wgmma>("wgmma_tf32", p.a, p.b, p.c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc, ws, stream);
  else
    run<Bf16Wgmma>("wgmma_bf16", p.a, p.b, p.c, p.m, p.k, p.n, p.lda, p.ldb, p.ldc, ws, stream);
}

void wgmma_bf16_matmul_16bit(const bfloat16* a, const bfloat16* b, float* c, std::int64_t m, std::int64_t k,
                             std::int64_t n, std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws,
                             cudaStream_t stream) {
  wgmma_stages::run<wgmma_stages::Bf16Wgmma>("wgmma_bf16", a, b, c, m, k, n, lda, ldb, ldc, ws, stream);
}

void wgmma_bf16_matmul_16bit(const half* a, const half* b, float* c, std::int64_t m, std::int64_t k, std::int64_t n,
                             std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws, cudaStream_t stream) {
  wgmma_stages::run<wgmma_stages::Bf16Wgmma>("wgmma_bf16", a, b, c, m, k, n, lda, ldb, ldc, ws, stream);
}

}  // namespace tandem::cuda
