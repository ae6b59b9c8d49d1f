// The tensor-core model (common/tensor_core.hpp) against the hardware: one wgmma k-step at a time on an
// H100 / H200, for bfloat16, half and tf32 inputs.
//   tc_model_probe check [N]     N random k-steps per format (default 10^8) on the GPU, each compared bit for
//                                bit with the model; prints the differences per input class, exit 1 if any.
//   tc_model_probe dump DIR      writes DIR/{bf16,f16,tf32}.bin: the inputs and the hardware's outputs of
//                                65536 k-steps per input class (for fitting the model's parameters offline).
//   tc_model_probe fit FILE FMT  (no GPU) searches the model's parameters that reproduce a dump.
// Each wgmma m64n8k16 (tf32: m64n8k8) computes 512 k-steps: D(i, j) = step(A row i, B column j, C(i, j)).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/tensor_core.hpp"

namespace tc = tandem::detail::tensor_core;
using tc::Format;

#define CHECK(x)                                                                               \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

// ---- Inputs ------------------------------------------------------------------------------------------
constexpr int kClasses = 10;
const char* const kClassNames[kClasses] = {"narrow",   "spread",  "cancel", "c_far",   "subnormal",
                                           "overflow", "special", "zeros",  "one_big", "carry"};

__host__ __device__ inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__host__ __device__ inline std::uint64_t rnd(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return mix(mix(mix(seed ^ a) ^ b) ^ c);
}

template <Format F>
struct Gen {
  using T = tc::FormatTraits<F>;
  using Bits = typename T::Bits;
  static constexpr int K = T::kSteps;
  static constexpr int kMaxExp = (1 << (T::kExpBits - 1)) - 1;  // 127 or 15
  // A value of the format with exponent e (clamped to the normal range), random fraction, sign s.
  __host__ __device__ static Bits make(bool s, int e, std::uint64_t r) {
    e = e < 1 - kMaxExp ? 1 - kMaxExp : (e > kMaxExp ? kMaxExp : e);
    std::uint32_t frac = std::uint32_t(r) & ((1u << T::kFrac) - 1);
    std::uint32_t u = (std::uint32_t(s) << (T::kFrac + T::kExpBits)) | (std::uint32_t(e + kMaxExp) << T::kFrac) | frac;
    if constexpr (F == Format::tf32) return (u << 13) | (std::uint32_t(r >> 20) & 0x1fff);  // low bits: noise
    return Bits(u);
  }
  __host__ __device__ static Bits special(std::uint64_t r) {
    constexpr std::uint32_t top = (1u << T::kExpBits) - 1;
    std::uint32_t u;
    switch (r % 6) {
      case 0:
        u = (top << T::kFrac) | 1u;
        break;  // NaN
      case 1:
        u = top << T::kFrac;
        break;  // +inf
      case 2:
        u = (1u << (T::kFrac + T::kExpBits)) | (top << T::kFrac);
        break;  // -inf
      case 3:
        u = 0;
        break;  // +0
      case 4:
        u = 1u << (T::kFrac + T::kExpBits);
        break;  // -0
      default:
        u = std::uint32_t(r >> 8) & ((1u << T::kFrac) - 1);
        break;  // subnormal
    }
    if constexpr (F == Format::tf32) return u << 13;
    return Bits(u);
  }
  __host__ __device__ static Bits subnormal(bool s, std::uint64_t r) {
    std::uint32_t u = (std::uint32_t(s) << (T::kFrac + T::kExpBits)) | (std::uint32_t(r) & ((1u << T::kFrac) - 1));
    if constexpr (F == Format::tf32) return u << 13;
    return Bits(u);
  }
  // Element k of row (role 0: A's row i) or column (role 1: B's column j) of instruction g in class cls.
  __host__ __device__ static Bits element(int cls, std::uint64_t seed, std::uint64_t g, int role, int idx, int k) {
    const std::uint64_t r = rnd(seed, g, std::uint64_t(role * 4096 + idx), std::uint64_t(k));
    const std::uint64_t rg = rnd(seed ^ 0x5555, g, 0, 0);  // shared by the instruction
    const bool s = (r >> 40) & 1;
    const int e_small = int((r >> 44) % 7) - 3;
    switch (cls) {
      case 0:
        return make(s, e_small, r);
      case 1: {
        const int spread = kMaxExp > 100 ? 20 : 7;
        return make(s, int((r >> 44) % (2 * spread + 1)) - spread, r);
      }
      case 2: {  // pairs (2t, 2t + 1) whose products cancel or nearly cancel
        const int t = k / 2;
        const std::uint64_t rp = rnd(seed, g, std::uint64_t(role * 4096 + idx), std::uint64_t(100 + t));
        Bits v = make((rp >> 40) & 1, int((rp >> 44) % 7) - 3, rp);
        if (k % 2 == 1) {
          if (role == 0) v = Bits(v ^ (Bits(1) << (T::kFrac + T::kExpBits + (F == Format::tf32 ? 13 : 0))));
          const int bump = int((r >> 50) % 4);  // perturb the last bit or two sometimes
          if (bump == 1) v = Bits(v + (F == Format::tf32 ? (1u << 13) : 1u));
          if (bump == 2) v = Bits(v - (F == Format::tf32 ? (1u << 13) : 1u));
        }
        return v;
      }
      case 3:
        return make(s, e_small, r);
      case 4: {
        if ((r >> 52) % 3 == 0) return subnormal(s, r);
        if constexpr (kMaxExp > 100) return make(s, -60 - int((r >> 44) % 8), r);
        return make(s, -14 + int((r >> 44) % 4), r);
      }
      case 5:
        return make(s, kMaxExp - int((r >> 44) % (kMaxExp > 100 ? 4 : 2)), r);
      case 6:
        return (r >> 52) % 16 == 0 ? special(r >> 8) : make(s, e_small, r);
      case 7: {  // zeros of both signs (every element zero in a quarter of the instructions)
        const Bits zero = Bits(std::uint32_t((r >> 53) & 1) << (8 * sizeof(Bits) - 1));
        return rg % 4 == 0 || (r >> 52) % 2 == 0 ? zero : make(s, e_small, r);
      }
      case 8: {
        const int big = int(rg % K);
        return k == big ? make(s, 8, r) : make(s, e_small - 6, r);
      }
      default: {  // carry: same sign, fractions of all ones
        Bits v = make(false, int((rg >> 8) % 3), ~std::uint64_t(0));
        return v;
      }
    }
  }
  __host__ __device__ static std::uint32_t c_value(int cls, std::uint64_t seed, std::uint64_t g, int i, int j) {
    const std::uint64_t r = rnd(seed ^ 0xc0ffee, g, std::uint64_t(i), std::uint64_t(j));
    const bool s = (r >> 40) & 1;
    auto f32 = [](bool sign, int e, std::uint64_t bits) {
      e = e < -126 ? -126 : (e > 127 ? 127 : e);
      return (std::uint32_t(sign) << 31) | (std::uint32_t(e + 127) << 23) | (std::uint32_t(bits) & 0x7fffff);
    };
    if ((r >> 60) == 0) return std::uint32_t(s) << 31;  // +-0, 1 in 16
    switch (cls) {
      case 3:
        return f32(s, (r >> 44) % 2 ? 10 + int((r >> 45) % 30) : -10 - int((r >> 45) % 30), r);
      case 4:
        return (r >> 50) % 2 ? ((std::uint32_t(s) << 31) | (std::uint32_t(r) & 0x7fffff))
                             : f32(s, -126 + int((r >> 44) % 4), r);
      case 5:
        return f32(s, 127 - int((r >> 44) % 3), r);
      case 6:
        if ((r >> 52) % 8 == 0) {
          const std::uint32_t sp[4] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x80000000u};
          return sp[(r >> 55) % 4];
        }
        return f32(s, int((r >> 44) % 7) - 3, r);
      case 7:
        return (r >> 52) % 2 ? (std::uint32_t(s) << 31) : f32(s, int((r >> 44) % 7) - 3, r);
      case 9:
        return f32(false, 4, ~std::uint64_t(0));
      default:
        return f32(s, int((r >> 44) % 10) - 3, r);
    }
  }
};

// ---- The hardware --------------------------------------------------------------------------------------
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ std::uint64_t desc(std::uint32_t addr) {  // K-major, 128-byte swizzle
  return std::uint64_t((addr & 0x3FFFF) >> 4) | (std::uint64_t(1) << 16) | (std::uint64_t(1024 >> 4) << 32) |
         (std::uint64_t(1) << 62);
}
// Byte offset of element k of row r in a K-major tile of 128-byte rows in the 128-byte swizzle.
__host__ __device__ inline int swizzled(int r, int byte) {
  return r * 128 + (((byte / 16) ^ (r % 8)) * 16) + byte % 16;
}

template <Format F>
__device__ __forceinline__ void wgmma_step(float (&d)[4], std::uint64_t a, std::uint64_t b) {
  if constexpr (F == Format::bf16) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "l"(a), "l"(b));
  } else if constexpr (F == Format::f16) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "l"(a), "l"(b));
  } else {
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, %4, %5, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "l"(a), "l"(b));
  }
}

struct Mismatch {
  int cls;
  std::uint32_t c, hw, model;
  std::uint32_t a[16], b[16];
};
constexpr int kKeep = 16;

// One warpgroup per block; block x takes instructions g = x, x + gridDim.x, ... of class cls. dump: the
// inputs and outputs go to out (per instruction: A 64 x K, B 8 x K, C 512, D 512 words); check: compared
// with the model.
template <Format F>
__global__ void __launch_bounds__(128)
    probe_kernel(int cls, std::uint64_t seed, std::uint64_t instructions, std::uint32_t* out, tc::Params params,
                 unsigned long long* counts, Mismatch* kept) {
  using G = Gen<F>;
  using Bits = typename G::Bits;
  constexpr int K = G::K;
  __shared__ __align__(1024) unsigned char sa[64 * 128];
  __shared__ __align__(1024) unsigned char sb[8 * 128];
  __shared__ Bits ra[64][K];
  __shared__ Bits rb[8][K];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  for (std::uint64_t g = blockIdx.x; g < instructions; g += gridDim.x) {
    __syncthreads();
    for (int e = t; e < 64 * K; e += 128) {
      const int r = e / K, k = e % K;
      const Bits v = G::element(cls, seed, g, 0, r, k);
      ra[r][k] = v;
      *reinterpret_cast<Bits*>(sa + swizzled(r, k * int(sizeof(Bits)))) = v;
    }
    for (int e = t; e < 8 * K; e += 128) {
      const int r = e / K, k = e % K;
      const Bits v = G::element(cls, seed, g, 1, r, k);
      rb[r][k] = v;
      *reinterpret_cast<Bits*>(sb + swizzled(r, k * int(sizeof(Bits)))) = v;
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    int rows[4], cols[4];
    std::uint32_t cbits[4];
    float d[4];
    for (int q = 0; q < 4; ++q) {
      rows[q] = warp * 16 + lane / 4 + (q >= 2 ? 8 : 0);
      cols[q] = 2 * (lane % 4) + (q & 1);
      cbits[q] = G::c_value(cls, seed, g, rows[q], cols[q]);
      d[q] = __uint_as_float(cbits[q]);
    }
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    wgmma_step<F>(d, desc(smem_addr(sa)), desc(smem_addr(sb)));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    for (int q = 0; q < 4; ++q) asm volatile("" : "+f"(d[q])::"memory");
    if (out) {
      std::uint32_t* o = out + g * std::uint64_t(64 * K + 8 * K + 1024);
      for (int e = t; e < 64 * K; e += 128) o[e] = ra[e / K][e % K];
      for (int e = t; e < 8 * K; e += 128) o[64 * K + e] = rb[e / K][e % K];
      for (int q = 0; q < 4; ++q) {
        o[64 * K + 8 * K + rows[q] * 8 + cols[q]] = cbits[q];
        o[64 * K + 8 * K + 512 + rows[q] * 8 + cols[q]] = __float_as_uint(d[q]);
      }
      continue;
    }
    for (int q = 0; q < 4; ++q) {
      const std::uint32_t hw = __float_as_uint(d[q]);
      std::uint32_t model = tc::k_step<F>(ra[rows[q]], rb[cols[q]], cbits[q], params);
      tc::Term ta[K], tb[K];  // the decoded form the CPU's product uses gives the same bits
      for (int k = 0; k < K; ++k) ta[k] = tc::term_of<F>(ra[rows[q]][k]), tb[k] = tc::term_of<F>(rb[cols[q]][k]);
      const std::uint32_t fast = tc::decoded_step<F>(ta, tb, cbits[q], ra[rows[q]], rb[cols[q]]);
      if (fast != model) model = fast | 0x1;  // (reported as a difference either way)
      // Every NaN is one: the hardware's NaN bits are compared as the class "NaN".
      const bool hw_nan = (hw & 0x7fffffff) > 0x7f800000, model_nan = (model & 0x7fffffff) > 0x7f800000;
      const bool same = (hw == model || (hw_nan && model_nan && hw == tc::kNanBits)) &&
                        fast == tc::canonical_step<F>(ra[rows[q]], rb[cols[q]], cbits[q]);
      atomicAdd(&counts[2 * cls], 1ull);
      if (!same) {
        const unsigned long long n = atomicAdd(&counts[2 * cls + 1], 1ull);
        if (n < kKeep) {
          Mismatch& m = kept[cls * kKeep + n];
          m.cls = cls, m.c = cbits[q], m.hw = hw, m.model = model;
          for (int k = 0; k < K; ++k) m.a[k] = ra[rows[q]][k], m.b[k] = rb[cols[q]][k];
        }
      }
    }
  }
}

// The parameters found for each format (probe fit), used by check.
template <Format F>
tc::Params fitted() {
  return tc::canonical_params<F>();
}

template <Format F>
const char* fname() {
  return F == Format::bf16 ? "bf16" : F == Format::f16 ? "f16" : "tf32";
}

template <Format F>
std::uint64_t check(std::uint64_t n, std::uint64_t seed) {
  constexpr int K = tc::FormatTraits<F>::kSteps;
  unsigned long long* counts;
  Mismatch* kept;
  CHECK(cudaMallocManaged(&counts, sizeof(unsigned long long) * 2 * kClasses));
  CHECK(cudaMallocManaged(&kept, sizeof(Mismatch) * kKeep * kClasses));
  std::memset(counts, 0, sizeof(unsigned long long) * 2 * kClasses);
  const std::uint64_t per_class = (n / kClasses + 511) / 512;
  for (int cls = 0; cls < kClasses; ++cls) {
    probe_kernel<F><<<2048, 128>>>(cls, seed, per_class, nullptr, fitted<F>(), counts, kept);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  std::uint64_t total = 0, bad = 0;
  for (int cls = 0; cls < kClasses; ++cls) {
    std::printf("  %-5s %-10s %12llu k-steps, %llu differ\n", fname<F>(), kClassNames[cls], counts[2 * cls],
                counts[2 * cls + 1]);
    total += counts[2 * cls], bad += counts[2 * cls + 1];
    for (unsigned long long i = 0; i < std::min<unsigned long long>(counts[2 * cls + 1], 3); ++i) {
      const Mismatch& m = kept[cls * kKeep + i];
      std::printf("    c=%08x hw=%08x model=%08x a=", m.c, m.hw, m.model);
      for (int k = 0; k < K; ++k) std::printf("%x%s", m.a[k], k + 1 < K ? "," : "");
      std::printf(" b=");
      for (int k = 0; k < K; ++k) std::printf("%x%s", m.b[k], k + 1 < K ? "," : "");
      std::printf("\n");
    }
  }
  std::printf("%s: %llu k-steps, %llu differ from the model\n", fname<F>(), (unsigned long long)total,
              (unsigned long long)bad);
  CHECK(cudaFree(counts));
  CHECK(cudaFree(kept));
  return bad;
}

constexpr std::uint64_t kDumpInstructions = 128;  // per class: 65536 k-steps

template <Format F>
void dump(const std::string& dir, std::uint64_t seed) {
  constexpr int K = tc::FormatTraits<F>::kSteps;
  const std::uint64_t words = kDumpInstructions * (64 * K + 8 * K + 1024);
  std::uint32_t* out;
  CHECK(cudaMallocManaged(&out, words * 4 * kClasses));
  for (int cls = 0; cls < kClasses; ++cls) {
    probe_kernel<F><<<128, 128>>>(cls, seed, kDumpInstructions, out + cls * words, tc::Params{}, nullptr, nullptr);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  const std::string path = dir + "/" + fname<F>() + ".bin";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(out, 4, words * kClasses, f) != words * kClasses) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(2);
  }
  std::fclose(f);
  CHECK(cudaFree(out));
  std::printf("wrote %s\n", path.c_str());
}

// ---- Fitting (host only) ---------------------------------------------------------------------------------
template <Format F>
void fit(const std::string& path) {
  using Bits = typename tc::FormatTraits<F>::Bits;
  constexpr int K = tc::FormatTraits<F>::kSteps;
  const std::uint64_t words = kDumpInstructions * (64 * K + 8 * K + 1024);
  std::vector<std::uint32_t> data(words * kClasses);
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f || std::fread(data.data(), 4, data.size(), f) != data.size()) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::fclose(f);
  const int sub = std::getenv("FIT_SUB") ? std::atoi(std::getenv("FIT_SUB")) : 8;  // every sub-th instruction
  auto errors = [&](const tc::Params& p, int cls) {
    std::uint64_t bad = 0;
    const std::uint32_t* base = data.data() + cls * words;
    for (std::uint64_t g = 0; g < kDumpInstructions; g += sub) {
      const std::uint32_t* o = base + g * (64 * K + 8 * K + 1024);
      for (int i = 0; i < 64; ++i)
        for (int j = 0; j < 8; ++j) {
          Bits a[K], b[K];
          for (int k = 0; k < K; ++k) a[k] = Bits(o[i * K + k]), b[k] = Bits(o[64 * K + j * K + k]);
          const std::uint32_t c = o[64 * K + 8 * K + i * 8 + j], hw = o[64 * K + 8 * K + 512 + i * 8 + j];
          const std::uint32_t m = tc::k_step<F>(a, b, c, p);
          const bool hw_nan = (hw & 0x7fffffff) > 0x7f800000, m_nan = (m & 0x7fffffff) > 0x7f800000;
          if (!(hw == m || (hw_nan && m_nan))) ++bad;
        }
    }
    return bad;
  };
  const int blocks[] = {2, 4, 8, 16};
  struct Best {
    std::uint64_t bad = ~0ull;
    tc::Params p;
  } best;
  for (int block : blocks) {
    if (block > K) continue;
    for (int frac = 20; frac <= 44; ++frac)
      for (int flags = 0; flags < 8; ++flags) {
        tc::Params p;
        p.block = block, p.frac_bits = frac, p.floor_terms = flags & 1, p.nearest = flags & 2, p.normalised = flags & 4;
        std::uint64_t bad = 0;
        for (int cls : {0, 1, 2, 3, 8, 9}) bad += errors(p, cls);
        if (bad < best.bad) best = {bad, p};
        if (bad == 0)
          std::printf(
              "fits classes narrow/spread/cancel/c_far/one_big/carry: block %d frac %d floor %d nearest %d "
              "normalised %d\n",
              block, frac, int(p.floor_terms), int(p.nearest), int(p.normalised));
      }
  }
  const tc::Params& p = best.p;
  std::printf("best: block %d frac %d floor %d nearest %d normalised %d (%llu differ)\n", p.block, p.frac_bits,
              int(p.floor_terms), int(p.nearest), int(p.normalised), (unsigned long long)best.bad);
  for (int z = 0; z < 8; ++z) {
    tc::Params q = p;
    q.ieee_zero_sign = z & 1, q.flush_subnormal = z & 2, q.overflow_to_max = z & 4;
    std::printf("  zero_sign %d flush %d overflow_to_max %d:", int(q.ieee_zero_sign), int(q.flush_subnormal),
                int(q.overflow_to_max));
    for (int cls = 0; cls < kClasses; ++cls)
      std::printf(" %s %llu", kClassNames[cls], (unsigned long long)errors(q, cls));
    std::printf("\n");
  }
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  const std::uint64_t seed = 0x7a11de3ull;
  if (mode == "fit" && argc > 3) {
    const std::string fmt = argv[3];
    if (fmt == "bf16") fit<Format::bf16>(argv[2]);
    if (fmt == "f16") fit<Format::f16>(argv[2]);
    if (fmt == "tf32") fit<Format::tf32>(argv[2]);
    return 0;
  }
  int devices = 0, major = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("tc_model_probe: no GPU\n");
    return 77;
  }
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major != 9) {
    std::printf("tc_model_probe: needs a GPU of compute capability 9.0 (wgmma)\n");
    return 77;
  }
  if (mode == "dump" && argc > 2) {
    dump<Format::bf16>(argv[2], seed);
    dump<Format::f16>(argv[2], seed);
    dump<Format::tf32>(argv[2], seed);
    return 0;
  }
  const std::uint64_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100000000ull;
  std::uint64_t bad = check<Format::bf16>(n, seed) + check<Format::f16>(n, seed) + check<Format::tf32>(n, seed);
  std::printf("%s\n", bad ? "FAILED: the model differs from the hardware" : "the model matches the hardware");
  return bad ? 1 : 0;
}
