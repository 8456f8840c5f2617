//===- Philox.h - the Philox-4x32-10 counter-based generator ----*- C++ -*-===//
//
// Salmon, Moraes, Dror, Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3"
// (SC'11), as implemented by Random123's philox4x32_R(10, ...): ten rounds
// of two 32x32 -> 64-bit multiplies, with the Weyl key schedule between
// rounds. The Random instruction (Isa.h) uses it; header-only so the unit
// tests can check it against the paper's known-answer vectors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>

namespace trnc::sim {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// Philox-4x32-10 of `ctr` under `key` (Random123 constants).
inline PhiloxCounter philox4x32(PhiloxCounter ctr, PhiloxKey key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    uint64_t p0 = uint64_t(kM0) * ctr[0], p1 = uint64_t(kM1) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1),
           uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)};
  }
  return ctr;
}

} // namespace trnc::sim
