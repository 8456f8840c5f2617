//===- VectorScalarSemantics.cpp - Vector, Scalar and GpSimd instructions -===//
//
// activation, tensor_tensor, tensor_scalar, tensor_reduce, memset and
// copy_predicated. Each
// streams its operands through fp32 chunks (cast on read, compute in fp32,
// cast on write). The ALU op or activation function is chosen once per
// instruction and instantiated as a template, so the per-element loops are
// branch-free and vectorisable.
//
// Choices where the ISA leaves room: `bypass` passes the tensor operand
// through unchanged (src0 for tensor_tensor; the data side of tensor_scalar,
// whatever the reverse flags); comparisons and logical ops yield 1.0 / 0.0;
// tensor_reduce folds left to right starting from the first element.
// Where torch defines the result, the ops match it: max/min and relu
// propagate NaN, remainder has the sign of the divisor and fmod that of the
// dividend, floor_divide is torch's div_floor, round is half to even,
// bitwise ops act on int32 (the values truncated toward zero).
//
//===----------------------------------------------------------------------===//

#include "sim/DTypes.h"
#include "sim/Exec.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace trnc::sim {
namespace {

using isa::ActFunc;
using isa::AluOp;

/// torch's remainder: the sign of the divisor (Python %).
float remainder(float a, float b) {
  float m = std::fmod(a, b);
  if (m != 0.0f && ((b < 0.0f) != (m < 0.0f)))
    m += b;
  return m;
}

/// torch's div_floor_floating (exact for integer operands below 2^24).
float floorDivide(float a, float b) {
  if (b == 0.0f)
    return a / b;
  float m = std::fmod(a, b);
  float div = (a - m) / b;
  if (m != 0.0f && ((b < 0.0f) != (m < 0.0f)))
    div -= 1.0f;
  if (div == 0.0f)
    return std::copysign(0.0f, a / b);
  float f = std::floor(div);
  return div - f > 0.5f ? f + 1.0f : f;
}

template <typename Op> float bitwise(float a, float b, Op op) {
  return float(op(f32ToI32(a), f32ToI32(b)));
}

/// Call fn with a functor float(float, float) implementing `op`.
template <typename Fn> void withAlu(AluOp op, Fn &&fn) {
  switch (op) {
  case AluOp::Bypass: return fn([](float a, float) { return a; });
  case AluOp::Add: return fn([](float a, float b) { return a + b; });
  case AluOp::Subtract: return fn([](float a, float b) { return a - b; });
  case AluOp::Multiply: return fn([](float a, float b) { return a * b; });
  case AluOp::Divide: return fn([](float a, float b) { return a / b; });
  case AluOp::Max:
    return fn([](float a, float b) { return (a > b || a != a) ? a : b; });
  case AluOp::Min:
    return fn([](float a, float b) { return (a < b || a != a) ? a : b; });
  case AluOp::Pow:
    return fn([](float a, float b) { return std::pow(a, b); });
  case AluOp::IsEqual:
    return fn([](float a, float b) { return a == b ? 1.0f : 0.0f; });
  case AluOp::NotEqual:
    return fn([](float a, float b) { return a != b ? 1.0f : 0.0f; });
  case AluOp::IsGt:
    return fn([](float a, float b) { return a > b ? 1.0f : 0.0f; });
  case AluOp::IsGe:
    return fn([](float a, float b) { return a >= b ? 1.0f : 0.0f; });
  case AluOp::IsLt:
    return fn([](float a, float b) { return a < b ? 1.0f : 0.0f; });
  case AluOp::IsLe:
    return fn([](float a, float b) { return a <= b ? 1.0f : 0.0f; });
  case AluOp::LogicalAnd:
    return fn(
        [](float a, float b) { return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f; });
  case AluOp::LogicalOr:
    return fn(
        [](float a, float b) { return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f; });
  case AluOp::LogicalXor:
    return fn(
        [](float a, float b) { return (a != 0.0f) != (b != 0.0f) ? 1.0f : 0.0f; });
  case AluOp::BitwiseAnd:
    return fn([](float a, float b) {
      return bitwise(a, b, [](int32_t x, int32_t y) { return x & y; });
    });
  case AluOp::BitwiseOr:
    return fn([](float a, float b) {
      return bitwise(a, b, [](int32_t x, int32_t y) { return x | y; });
    });
  case AluOp::BitwiseXor:
    return fn([](float a, float b) {
      return bitwise(a, b, [](int32_t x, int32_t y) { return x ^ y; });
    });
  case AluOp::Remainder: return fn(remainder);
  case AluOp::Fmod:
    return fn([](float a, float b) { return std::fmod(a, b); });
  case AluOp::FloorDivide: return fn(floorDivide);
  }
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

/// log(1 + e^x) without overflow for large x (torch's threshold 20).
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

/// Call fn with a functor float(float) implementing activation `f`.
template <typename Fn> void withAct(ActFunc f, Fn &&fn) {
  switch (f) {
  case ActFunc::Copy: return fn([](float x) { return x; });
  // Edge values follow eager PyTorch (CPU): relu keeps -0.0 and NaN.
  case ActFunc::Relu: return fn([](float x) { return x < 0.0f ? 0.0f : x; });
  case ActFunc::Exp: return fn([](float x) { return std::exp(x); });
  case ActFunc::Log: return fn([](float x) { return std::log(x); });
  case ActFunc::Tanh: return fn([](float x) { return std::tanh(x); });
  case ActFunc::Sigmoid: return fn(sigmoid);
  case ActFunc::Gelu:
    // torch's erf form: +inf at +inf, NaN at -inf (-inf * 0). (Some CPUs'
    // vectorised erf makes eager's +inf a NaN too; its scalar kernel and
    // other CPUs' vector kernels give +inf.)
    return fn([](float x) {
      return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    });
  case ActFunc::GeluTanh:
    return fn([](float x) {
      const float k = 0.79788456080286536f; // sqrt(2 / pi)
      return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
    });
  case ActFunc::Silu: return fn([](float x) { return x * sigmoid(x); });
  case ActFunc::Sqrt: return fn([](float x) { return std::sqrt(x); });
  case ActFunc::Rsqrt: return fn([](float x) { return 1.0f / std::sqrt(x); });
  case ActFunc::Reciprocal: return fn([](float x) { return 1.0f / x; });
  case ActFunc::Square: return fn([](float x) { return x * x; });
  case ActFunc::Abs: return fn([](float x) { return std::fabs(x); });
  case ActFunc::Sign:
    return fn([](float x) {
      return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); // torch: sign(-0) = sign(nan) = +0
    });
  case ActFunc::Erf: return fn([](float x) { return std::erf(x); });
  case ActFunc::Sin: return fn([](float x) { return std::sin(x); });
  case ActFunc::Softplus: return fn(softplus);
  case ActFunc::Cos: return fn([](float x) { return std::cos(x); });
  case ActFunc::Expm1: return fn([](float x) { return std::expm1(x); });
  case ActFunc::Log1p: return fn([](float x) { return std::log1p(x); });
  case ActFunc::Mish:
    return fn([](float x) { return x * std::tanh(softplus(x)); });
  case ActFunc::Floor: return fn([](float x) { return std::floor(x); });
  case ActFunc::Ceil: return fn([](float x) { return std::ceil(x); });
  // nearbyint in the default rounding mode: half to even, as torch.round.
  case ActFunc::Round: return fn([](float x) { return std::nearbyint(x); });
  case ActFunc::Trunc: return fn([](float x) { return std::trunc(x); });
  case ActFunc::IsNan:
    return fn([](float x) { return std::isnan(x) ? 1.0f : 0.0f; });
  case ActFunc::IsInf:
    return fn([](float x) { return std::isinf(x) ? 1.0f : 0.0f; });
  // torch's gelu_backward and silu_backward formulas (torch/_decomp), so
  // that +-inf gives what eager gives (NaN for gelu: inf * 0).
  case ActFunc::GeluDx:
    return fn([](float x) {
      const float kBeta = 0.39894228040143268f; // 1 / sqrt(2 pi)
      float cdf = 0.5f * (1.0f + std::erf(x * 0.70710678118654752f));
      return cdf + x * (kBeta * std::exp(x * x * -0.5f));
    });
  case ActFunc::SiluDx:
    return fn([](float x) {
      float s = sigmoid(x);
      return s * (1.0f + x * (1.0f - s));
    });
  }
}

uint64_t totalElements(const View &v) { return v.partitions() * v.freeElements(); }

} // namespace

void execActivation(ExecContext &ctx, const isa::Instruction &inst) {
  View d = ctx.view(inst.dst), s = ctx.view(inst.src0);
  const bool hasBias = inst.src1.present();
  View b = hasBias ? ctx.view(inst.src1) : View();
  const float scale = inst.imm0;
  const uint64_t P = d.partitions(), F = d.freeElements();
  float *in = ctx.buf0.data(), *out = ctx.buf1.data();
  Walker wd(d, 1), ws(s, 1);
  withAct(isa::ActFunc(inst.op0), [&](auto f) {
    for (uint64_t p = 0; p < P; ++p) {
      // The bias is per partition: one element of src1 at partition p.
      float bias = inst.imm1;
      if (hasBias) {
        Walker wb(b, 1);
        wb.setPartition(p);
        wb.load(&bias, 1);
      }
      wd.setPartition(p);
      ws.setPartition(p);
      for (uint64_t left = F; left;) {
        size_t k = size_t(std::min<uint64_t>(left, kChunk));
        ws.load(in, k);
        // A zero bias adds nothing: x * scale + (+0.0) would turn -0.0 into
        // +0.0 (IEEE 754), and 1/x, rsqrt, floor, tanh, sin... of -0.0 must
        // see the sign, as in eager.
        if (bias == 0.0f)
          for (size_t i = 0; i < k; ++i)
            out[i] = f(in[i] * scale);
        else
          for (size_t i = 0; i < k; ++i)
            out[i] = f(in[i] * scale + bias);
        wd.store(out, k);
        left -= k;
      }
    }
  });
}

void execTensorTensor(ExecContext &ctx, const isa::Instruction &inst) {
  View d = ctx.view(inst.dst), a = ctx.view(inst.src0), b = ctx.view(inst.src1);
  Walker wd(d, 0), wa(a, 0), wb(b, 0);
  float *x = ctx.buf0.data(), *y = ctx.buf1.data(), *out = ctx.buf2.data();
  withAlu(AluOp(inst.op0), [&](auto op) {
    for (uint64_t left = totalElements(d); left;) {
      size_t k = size_t(std::min<uint64_t>(left, kChunk));
      wa.load(x, k);
      wb.load(y, k);
      for (size_t i = 0; i < k; ++i)
        out[i] = op(x[i], y[i]);
      wd.store(out, k);
      left -= k;
    }
  });
}

namespace {

/// out[i] = x[i] op s, or s op x[i] when `reverse`; bypass keeps x.
void applyScalar(AluOp op, bool reverse, float s, float *x, size_t n) {
  if (op == AluOp::Bypass)
    return;
  withAlu(op, [&](auto f) {
    if (reverse)
      for (size_t i = 0; i < n; ++i)
        x[i] = f(s, x[i]);
    else
      for (size_t i = 0; i < n; ++i)
        x[i] = f(x[i], s);
  });
}

} // namespace

void execTensorScalar(ExecContext &ctx, const isa::Instruction &inst) {
  View d = ctx.view(inst.dst), a = ctx.view(inst.src0);
  float *x = ctx.buf0.data();
  const bool rev0 = inst.flags & isa::kFlagReverse0;
  const bool rev1 = inst.flags & isa::kFlagReverse1;
  auto apply = [&](Walker &wd, Walker &wa, float s0, float s1, uint64_t n) {
    for (uint64_t left = n; left;) {
      size_t k = size_t(std::min<uint64_t>(left, kChunk));
      wa.load(x, k);
      applyScalar(AluOp(inst.op0), rev0, s0, x, k);
      applyScalar(AluOp(inst.op1), rev1, s1, x, k);
      wd.store(x, k);
      left -= k;
    }
  };
  if (!inst.src1.present() && !inst.src2.present()) {
    Walker wd(d, 0), wa(a, 0);
    apply(wd, wa, inst.imm0, inst.imm1, totalElements(d));
    return;
  }
  // operand0 (src1) and operand1 (src2) per partition, where present: one
  // value for each partition.
  std::optional<View> s0v, s1v;
  std::optional<Walker> w0, w1;
  if (inst.src1.present()) {
    s0v = ctx.view(inst.src1);
    w0.emplace(*s0v, 1);
  }
  if (inst.src2.present()) {
    s1v = ctx.view(inst.src2);
    w1.emplace(*s1v, 1);
  }
  Walker wd(d, 1), wa(a, 1);
  for (uint64_t p = 0; p < d.partitions(); ++p) {
    wd.setPartition(p);
    wa.setPartition(p);
    float s0 = inst.imm0, s1 = inst.imm1;
    if (w0) {
      w0->setPartition(p);
      w0->load(&s0, 1);
    }
    if (w1) {
      w1->setPartition(p);
      w1->load(&s1, 1);
    }
    apply(wd, wa, s0, s1, d.freeElements());
  }
}

void execTensorReduce(ExecContext &ctx, const isa::Instruction &inst) {
  View d = ctx.view(inst.dst), s = ctx.view(inst.src0);
  const uint64_t R = inst.src0.count[inst.src0.numDims - 1]; // reduced dim
  const uint64_t P = s.partitions(), F = s.freeElements();
  float *in = ctx.buf0.data(), *out = ctx.buf1.data();
  Walker wd(d, 1), ws(s, 1);
  withAlu(AluOp(inst.op0), [&](auto op) {
    for (uint64_t p = 0; p < P; ++p) {
      ws.setPartition(p);
      wd.setPartition(p);
      float acc = 0.0f;
      uint64_t inGroup = 0; // elements folded into acc so far
      size_t nOut = 0;
      for (uint64_t left = F; left;) {
        size_t k = size_t(std::min<uint64_t>(left, kChunk));
        ws.load(in, k);
        for (size_t i = 0; i < k;) {
          // Fold the rest of the current group that lies in this chunk.
          size_t seg = size_t(std::min<uint64_t>(R - inGroup, k - i));
          size_t j = i;
          if (inGroup == 0)
            acc = in[j++];
          for (; j < i + seg; ++j)
            acc = op(acc, in[j]);
          inGroup += seg;
          i += seg;
          if (inGroup == R) {
            out[nOut++] = acc;
            inGroup = 0;
            if (nOut == kChunk) {
              wd.store(out, nOut);
              nOut = 0;
            }
          }
        }
        left -= k;
      }
      wd.store(out, nOut);
    }
  });
}

void execCopyPredicated(ExecContext &ctx, const isa::Instruction &inst) {
  View d = ctx.view(inst.dst), pred = ctx.view(inst.src0),
       src = ctx.view(inst.src1);
  Walker wr(d, 0), wd(d, 0), wp(pred, 0), ws(src, 0);
  float *m = ctx.buf0.data(), *x = ctx.buf1.data(), *out = ctx.buf2.data();
  for (uint64_t left = totalElements(d); left;) {
    size_t k = size_t(std::min<uint64_t>(left, kChunk));
    wr.load(out, k);
    wp.load(m, k);
    ws.load(x, k);
    for (size_t i = 0; i < k; ++i)
      out[i] = m[i] != 0.0f ? x[i] : out[i];
    wd.store(out, k);
    left -= k;
  }
}

void execMemset(ExecContext &ctx, const isa::Instruction &inst) {
  View d = ctx.view(inst.dst);
  Walker wd(d, 0);
  float *x = ctx.buf0.data();
  uint64_t left = totalElements(d);
  std::fill(x, x + std::min<uint64_t>(left, kChunk), inst.imm0);
  while (left) {
    size_t k = size_t(std::min<uint64_t>(left, kChunk));
    wd.store(x, k);
    left -= k;
  }
}

} // namespace trnc::sim
