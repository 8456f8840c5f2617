//===- DTypes.h - Element conversions of the simulator ------------*- C++ -*-===//
//
// Engines compute in fp32 and cast on read and write (HARDWARE.md, "How a core
// executes"). These are the casts: fp32<->bf16 with round-to-nearest-even as
// the hardware (and the NKI simulator) does, fp32<->fp16 (IEEE binary16, RNE,
// subnormals, inf and NaN), fp32 -> i32/i64/u8 truncating toward zero with
// saturation (NaN -> 0), matching torch's float-to-int casts, and fp32 ->
// bool as (x != 0). Integer <-> integer copies do not pass through fp32
// (loadInteger/storeInteger, exact; narrowing saturates). Row helpers
// convert whole strided rows so the hot loops stay tight.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "isa/Isa.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace trnc::sim {

inline uint32_t floatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline float bitsFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

inline float bf16ToF32(uint16_t h) { return bitsFloat(uint32_t(h) << 16); }

inline uint16_t f32ToBf16(float f) {
  uint32_t b = floatBits(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a (quiet) NaN
    return uint16_t((b >> 16) | 0x0040u);
  b += 0x7fffu + ((b >> 16) & 1u); // round to nearest, ties to even
  return uint16_t(b >> 16);
}

inline float f16ToF32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) { // zero or subnormal: man * 2^-24
    float v = float(man) * 0x1p-24f;
    return sign ? -v : v;
  }
  if (exp == 31) // inf or NaN
    return bitsFloat(sign | 0x7f800000u | (man << 13));
  return bitsFloat(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t f32ToF16(float f) {
  uint32_t b = floatBits(f);
  uint16_t sign = uint16_t((b >> 16) & 0x8000u);
  uint32_t a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) // inf or NaN
    return uint16_t(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
  if (a >= 0x477ff000u) // >= 65520 rounds to infinity
    return uint16_t(sign | 0x7c00u);
  if (a < 0x38800000u) { // below 2^-14: subnormal half (or zero)
    float scaled = bitsFloat(a) * 0x1p24f; // exact: a power-of-two scale
    return uint16_t(sign | uint16_t(std::nearbyint(scaled)));
  }
  a -= (127u - 15u) << 23;          // rebias the exponent
  a += 0xfffu + ((a >> 13) & 1u);   // round to nearest, ties to even
  return uint16_t(sign | (a >> 13)); // a carry bumps the exponent correctly
}

inline int32_t f32ToI32(float f) {
  if (std::isnan(f))
    return 0;
  if (f >= 2147483648.0f)
    return INT32_MAX;
  if (f <= -2147483648.0f)
    return INT32_MIN;
  return int32_t(f);
}

inline uint8_t f32ToU8(float f) {
  if (!(f > 0.0f)) // also NaN
    return 0;
  if (f >= 255.0f)
    return 255;
  return uint8_t(f);
}

/// fp32 -> int64 (HBM-side I64 writes): toward zero, saturating, NaN -> 0.
inline int64_t f32ToI64(float f) {
  if (std::isnan(f))
    return 0;
  if (f >= 9223372036854775808.0f)
    return INT64_MAX;
  if (f <= -9223372036854775808.0f)
    return INT64_MIN;
  return int64_t(f);
}

/// fp32 -> bool: (f != 0), so NaN -> 1 as torch's casts do.
inline uint8_t f32ToBool(float f) { return f != 0.0f ? 1 : 0; }

/// One element of `t` at `p` (any alignment) as fp32.
inline float loadElement(const uint8_t *p, isa::DType t) {
  switch (t) {
  case isa::DType::F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case isa::DType::BF16:
  case isa::DType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return t == isa::DType::BF16 ? bf16ToF32(h) : f16ToF32(h);
  }
  case isa::DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return float(v);
  }
  case isa::DType::U8:
  case isa::DType::Bool:
    return float(*p);
  case isa::DType::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return float(v);
  }
  }
  return 0.0f;
}

/// Convert `v` to `t` and store it at `p` (any alignment).
inline void storeElement(uint8_t *p, isa::DType t, float v) {
  switch (t) {
  case isa::DType::F32:
    std::memcpy(p, &v, 4);
    return;
  case isa::DType::BF16: {
    uint16_t h = f32ToBf16(v);
    std::memcpy(p, &h, 2);
    return;
  }
  case isa::DType::F16: {
    uint16_t h = f32ToF16(v);
    std::memcpy(p, &h, 2);
    return;
  }
  case isa::DType::I32: {
    int32_t i = f32ToI32(v);
    std::memcpy(p, &i, 4);
    return;
  }
  case isa::DType::U8:
    *p = f32ToU8(v);
    return;
  case isa::DType::Bool:
    *p = f32ToBool(v);
    return;
  case isa::DType::I64: {
    int64_t i = f32ToI64(v);
    std::memcpy(p, &i, 8);
    return;
  }
  }
}

/// One element of an integer dtype at `p` as int64 (exact).
inline int64_t loadInteger(const uint8_t *p, isa::DType t) {
  switch (t) {
  case isa::DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case isa::DType::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  default:
    return *p;
  }
}

/// Store `v` to an integer dtype: saturating for I32/U8, != 0 for Bool.
inline void storeInteger(uint8_t *p, isa::DType t, int64_t v) {
  switch (t) {
  case isa::DType::I32: {
    int32_t i = int32_t(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
    std::memcpy(p, &i, 4);
    return;
  }
  case isa::DType::I64:
    std::memcpy(p, &v, 8);
    return;
  case isa::DType::Bool:
    *p = v != 0;
    return;
  default:
    *p = uint8_t(std::clamp<int64_t>(v, 0, 255));
    return;
  }
}

/// Read `n` elements of `t`, `strideBytes` apart (0 = broadcast), as fp32.
void loadRow(const uint8_t *p, int64_t strideBytes, isa::DType t, float *out,
             size_t n);
/// Write `n` fp32 values converted to `t`, `strideBytes` apart.
void storeRow(uint8_t *p, int64_t strideBytes, isa::DType t, const float *in,
              size_t n);

} // namespace trnc::sim
