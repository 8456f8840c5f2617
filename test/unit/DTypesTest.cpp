//===- DTypesTest.cpp - The simulator's element casts -----------------------===//
//
// bf16 round-to-nearest-even, exhaustive fp16 round trips, and the saturating
// integer casts.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>
#include <limits>
#include <random>

using namespace trnc::sim;

TEST_CASE("fp32 -> bf16 rounds to nearest even", "[dtypes]") {
  CHECK(f32ToBf16(1.0f) == 0x3f80);
  CHECK(f32ToBf16(1.0f + 0x1p-8f) == 0x3f80);       // tie, to even (down)
  CHECK(f32ToBf16(1.0f + 3 * 0x1p-8f) == 0x3f82);   // tie, to even (up)
  CHECK(f32ToBf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81); // above the tie
  CHECK(f32ToBf16(-2.0f) == 0xc000);
  CHECK(f32ToBf16(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(std::isnan(bf16ToF32(f32ToBf16(std::nanf("")))));
  CHECK(bf16ToF32(0x3fc0) == 1.5f);
  // Largest finite float rounds up to infinity, as in hardware.
  CHECK(f32ToBf16(std::numeric_limits<float>::max()) == 0x7f80);
}

TEST_CASE("fp16 conversions are exact and round to nearest even", "[dtypes]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = f16ToF32(uint16_t(h));
    if (std::isnan(f)) {
      CHECK(std::isnan(f16ToF32(f32ToF16(f))));
      continue;
    }
    REQUIRE(f32ToF16(f) == h);
  }
  CHECK(f16ToF32(0x3c00) == 1.0f);
  CHECK(f16ToF32(0x0001) == 0x1p-24f);
  CHECK(f32ToF16(65504.0f) == 0x7bff);
  CHECK(f32ToF16(65519.0f) == 0x7bff);
  CHECK(f32ToF16(65520.0f) == 0x7c00);
  CHECK(f32ToF16(1.0f + 0x1p-11f) == 0x3c00); // tie, to even
  CHECK(f32ToF16(0x1p-25f) == 0x0000);         // tie between 0 and 2^-24
  CHECK(f32ToF16(0x1p-25f * 3) == 0x0002);     // tie, to even
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
  for (int i = 0; i < 20000; ++i) {
    float x = dist(rng) * (i % 2 ? 1.0f : 1e-6f);
    uint16_t h = f32ToF16(x);
    float y = f16ToF32(h);
    if (std::isinf(y))
      continue;
    // No neighbouring half is closer.
    float up = f16ToF32(uint16_t(h + 1)), down = f16ToF32(uint16_t(h - 1));
    if (!std::isnan(up) && !std::isinf(up))
      REQUIRE(std::fabs(y - x) <= std::fabs(up - x));
    if ((h & 0x7fff) != 0 && !std::isnan(down) && !std::isinf(down))
      REQUIRE(std::fabs(y - x) <= std::fabs(down - x));
  }
}

TEST_CASE("integer casts truncate and saturate", "[dtypes]") {
  CHECK(f32ToI32(2.9f) == 2);
  CHECK(f32ToI32(-2.9f) == -2);
  CHECK(f32ToI32(3e9f) == INT32_MAX);
  CHECK(f32ToI32(-3e9f) == INT32_MIN);
  CHECK(f32ToI32(std::nanf("")) == 0);
  CHECK(f32ToU8(-1.0f) == 0);
  CHECK(f32ToU8(300.0f) == 255);
  CHECK(f32ToU8(7.7f) == 7);
}
