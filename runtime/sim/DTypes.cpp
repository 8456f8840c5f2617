//===- DTypes.cpp - Row conversions between memory dtypes and fp32 --------===//
//
// The hot path of every instruction: one contiguous (or strided, or
// broadcast) row converted to/from fp32. The contiguous case of each dtype is
// a separate tight loop so the compiler can vectorise it.
//
//===----------------------------------------------------------------------===//

#include "sim/DTypes.h"

#include <algorithm>

namespace trnc::sim {
namespace {

using isa::DType;

template <typename Raw, typename Conv>
void loadContiguous(const uint8_t *p, float *out, size_t n, Conv conv) {
  for (size_t i = 0; i < n; ++i) {
    Raw r;
    std::memcpy(&r, p + i * sizeof(Raw), sizeof(Raw));
    out[i] = conv(r);
  }
}

template <typename Raw, typename Conv>
void storeContiguous(uint8_t *p, const float *in, size_t n, Conv conv) {
  for (size_t i = 0; i < n; ++i) {
    Raw r = conv(in[i]);
    std::memcpy(p + i * sizeof(Raw), &r, sizeof(Raw));
  }
}

} // namespace

void loadRow(const uint8_t *p, int64_t strideBytes, DType t, float *out,
             size_t n) {
  if (strideBytes == 0) {
    std::fill(out, out + n, loadElement(p, t));
    return;
  }
  if (strideBytes == int64_t(isa::dtypeBytes(t))) {
    switch (t) {
    case DType::F32:
      std::memcpy(out, p, n * 4);
      return;
    case DType::BF16:
      return loadContiguous<uint16_t>(p, out, n, bf16ToF32);
    case DType::F16:
      return loadContiguous<uint16_t>(p, out, n, f16ToF32);
    case DType::I32:
      return loadContiguous<int32_t>(p, out, n,
                                     [](int32_t v) { return float(v); });
    case DType::U8:
    case DType::Bool:
      return loadContiguous<uint8_t>(p, out, n,
                                     [](uint8_t v) { return float(v); });
    case DType::I64:
      return loadContiguous<int64_t>(p, out, n,
                                     [](int64_t v) { return float(v); });
    }
  }
  for (size_t i = 0; i < n; ++i)
    out[i] = loadElement(p + int64_t(i) * strideBytes, t);
}

void storeRow(uint8_t *p, int64_t strideBytes, DType t, const float *in,
              size_t n) {
  if (strideBytes == 0) { // every value lands on one element: the last wins
    if (n)
      storeElement(p, t, in[n - 1]);
    return;
  }
  if (strideBytes == int64_t(isa::dtypeBytes(t))) {
    switch (t) {
    case DType::F32:
      std::memcpy(p, in, n * 4);
      return;
    case DType::BF16:
      return storeContiguous<uint16_t>(p, in, n, f32ToBf16);
    case DType::F16:
      return storeContiguous<uint16_t>(p, in, n, f32ToF16);
    case DType::I32:
      return storeContiguous<int32_t>(p, in, n, f32ToI32);
    case DType::U8:
      return storeContiguous<uint8_t>(p, in, n, f32ToU8);
    case DType::Bool:
      return storeContiguous<uint8_t>(p, in, n, f32ToBool);
    case DType::I64:
      return storeContiguous<int64_t>(p, in, n, f32ToI64);
    }
  }
  for (size_t i = 0; i < n; ++i)
    storeElement(p + int64_t(i) * strideBytes, t, in[i]);
}

} // namespace trnc::sim
