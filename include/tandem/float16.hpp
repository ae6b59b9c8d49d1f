// The 16-bit storage types: tandem::bfloat16 (1 sign, 8 exponent, 7 mantissa bits: float's range) and
// tandem::half (IEEE 754 binary16: 1, 5, 10). Each is two bytes with the bit layout of __nv_bfloat16 /
// __half and Eigen::bfloat16 / Eigen::half. Converting to float is exact; converting from float rounds
// to nearest, ties to even (overflow gives +-inf, NaN stays NaN, quiet). They are storage types: tandem
// reduces them with float results and multiplies them with float accumulation into float C; any other
// arithmetic on them goes through float (the implicit conversion). A double converts through float
// (two roundings): convert doubles to float yourself where that matters.
#pragma once

#include <bit>
#include <cstdint>

#if defined(__CUDACC__)
#define TANDEM_HOST_DEVICE __host__ __device__
#include <cuda_fp16.h>
#else
#define TANDEM_HOST_DEVICE
#endif

namespace tandem {

namespace detail {

TANDEM_HOST_DEVICE inline std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  return std::bit_cast<std::uint32_t>(f);
#endif
}
TANDEM_HOST_DEVICE inline float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  return std::bit_cast<float>(u);
#endif
}

// float -> bfloat16 bits, round to nearest even; NaN -> a quiet NaN with the same sign.
TANDEM_HOST_DEVICE inline std::uint16_t bfloat16_bits(float f) {
  std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);  // carries into the exponent when rounding up (to inf past the top)
  return static_cast<std::uint16_t>(u >> 16);
}
TANDEM_HOST_DEVICE inline float bfloat16_to_float(std::uint16_t b) { return bits_float(std::uint32_t(b) << 16); }

// float -> binary16 bits, round to nearest even (after Eigen's float_to_half_rtne): values from 65520
// up become inf, values below 2^-14 become subnormals or zero, NaN a quiet NaN with the same sign.
TANDEM_HOST_DEVICE inline std::uint16_t half_bits(float f) {
  std::uint32_t u = float_bits(f);
  const std::uint32_t sign = u & 0x80000000u;
  u ^= sign;
  std::uint16_t h;
  if (u >= (127u + 16u) << 23) {  // |f| >= 2^16, inf or NaN
    h = u > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (u < (113u << 23)) {  // |f| < 2^-14: subnormal or zero; the float add rounds to even
    const std::uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    h = static_cast<std::uint16_t>(float_bits(bits_float(u) + bits_float(magic)) - magic);
  } else {
    const std::uint32_t odd = (u >> 13) & 1u;
    u += 0xc8000fffu + odd;  // rebias the exponent and round (to inf from 65520 up)
    h = static_cast<std::uint16_t>(u >> 13);
  }
  return static_cast<std::uint16_t>(h | (sign >> 16));
}
TANDEM_HOST_DEVICE inline float half_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  const std::uint32_t shifted_exp = 0x7c00u << 13;
  std::uint32_t u = std::uint32_t(h & 0x7fffu) << 13;
  const std::uint32_t exp = shifted_exp & u;
  u += (127u - 15u) << 23;
  if (exp == shifted_exp) {
    u += (128u - 16u) << 23;  // inf or NaN
  } else if (exp == 0) {      // zero or subnormal: renormalise (exact)
    u += 1u << 23;
    u = float_bits(bits_float(u) - bits_float(113u << 23));
  }
  return bits_float(u | (std::uint32_t(h & 0x8000u) << 16));
#endif
}

}  // namespace detail

struct bfloat16 {
  std::uint16_t bits;  // the raw bits (value-initialised: +0.0)

  bfloat16() = default;
  TANDEM_HOST_DEVICE bfloat16(float f) : bits(detail::bfloat16_bits(f)) {}
  TANDEM_HOST_DEVICE operator float() const { return detail::bfloat16_to_float(bits); }
  TANDEM_HOST_DEVICE static bfloat16 from_bits(std::uint16_t b) {
    bfloat16 r;
    r.bits = b;
    return r;
  }
};

struct half {
  std::uint16_t bits;  // the raw bits (value-initialised: +0.0)

  half() = default;
  TANDEM_HOST_DEVICE half(float f) : bits(detail::half_bits(f)) {}
  TANDEM_HOST_DEVICE operator float() const { return detail::half_to_float(bits); }
  TANDEM_HOST_DEVICE static half from_bits(std::uint16_t b) {
    half r;
    r.bits = b;
    return r;
  }
};

static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2 && sizeof(half) == 2 && alignof(half) == 2);

}  // namespace tandem
