//===- IntegerRange.cpp - Value ranges of trn tensors ---------------------===//
//
// Transfer functions of the integer range analysis (IntegerRange.h): interval
// arithmetic over the bounds of every element, per trn op. Integer results of
// arithmetic must stay within 2^24 in magnitude (the engines round them in
// fp32); integer operands an engine reads must be exact in fp32; data that
// is only moved (views, concat, gathers, int <-> int converts: DMA) may hold
// anything. Float tensors are bounded too, for the float -> int converts
// downstream (T5's position buckets, `(x * 10).long()`): the bounds of their
// finite elements. Any float element may also be +-inf or NaN (not tracked),
// so each transfer function also covers finite results of infinite operands
// (exp(-inf) = 0, 1 / inf = 0, tanh(inf) = 1); converting +-inf or NaN to an
// integer is undefined in torch (C++ float -> int), so a convert's range is
// that of the finite elements: log(0) = -inf in T5's masked-out lanes does
// not make its buckets unbounded.
//
//===----------------------------------------------------------------------===//
#include "passes/IntegerRange.h"

#include "dialects/Trn/TrnOps.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <cmath>
#include <optional>

using namespace mlir;

namespace trnc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kInt32Min = -2147483648.0, kInt32Max = 2147483647.0;
/// log of the smallest positive fp32 (subnormal 2^-149): the most negative
/// finite log, log1p, of any float the engines hold.
constexpr double kLogTiniest = -103.28;

Type elementType(Value v) { return getElementTypeOrSelf(v.getType()); }
bool isInt(Value v) { return isa<IntegerType>(elementType(v)); }
bool isBool(Value v) { return elementType(v).isInteger(1); }

double nanToInf(double v, double inf) { return std::isnan(v) ? inf : v; }

/// The smallest interval holding every product of [a] and [b].
std::pair<double, double> mulBounds(double alo, double ahi, double blo,
                                    double bhi) {
  double c[] = {alo * blo, alo * bhi, ahi * blo, ahi * bhi};
  double lo = kInf, hi = -kInf;
  for (double v : c) { // 0 * inf is NaN: the unbounded side wins
    lo = std::min(lo, nanToInf(v, -kInf));
    hi = std::max(hi, nanToInf(v, kInf));
  }
  return {lo, hi};
}

/// An int32 value the engines read and write back unchanged: fp32 holds it,
/// or it is a saturation limit (INT32_MAX reads as 2^31, which the write
/// saturates back).
bool fp32RoundTrips(double v) {
  return double(float(v)) == v || v >= kInt32Max || v <= kInt32Min;
}

/// The union of two sorted, duplicate-free lists of graph inputs (every list
/// starts as one input and grows only here), by one linear merge: a deep
/// network's values each depend on hundreds of inputs (its parameters), and
/// a search per element plus a sort made this pass the largest part of the
/// C++ compile (45% of densenet121's forward).
void mergeInputs(SmallVector<unsigned, 2> &into, ArrayRef<unsigned> from) {
  assert(llvm::is_sorted(into) && llvm::is_sorted(from) && "input lists are kept sorted");
  if (from.empty() || into == from)
    return;
  if (into.empty()) {
    into.assign(from.begin(), from.end());
    return;
  }
  SmallVector<unsigned, 2> merged;
  merged.reserve(into.size() + from.size());
  std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(merged));
  into = std::move(merged);
}

/// Elements one result element folds together (reductions, scans, matmul).
double foldedCount(Operation *op) {
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  return TypeSwitch<Operation *, double>(op)
      .Case<trn::ReduceSumOp, trn::ReduceProdOp, trn::ReduceMaxOp,
            trn::ReduceMinOp>([&](auto r) {
        double n = 1;
        for (int64_t d : r.getDims())
          n *= double(in.getDimSize(d));
        return n;
      })
      .Case<trn::CumsumOp, trn::CumprodOp>(
          [&](auto s) { return double(in.getDimSize(s.getDim())); })
      .Case([&](trn::MatmulOp) { return double(in.getShape().back()); })
      .Case([&](trn::Conv2dOp c) {
        auto w = cast<RankedTensorType>(c.getWeight().getType());
        return double(w.getDimSize(1) * w.getDimSize(2) * w.getDimSize(3));
      })
      .Default([](Operation *) { return 1.0; });
}

/// "'trn.mul_scalar' (aten.mul.Tensor)": what the user wrote, when known.
std::string describeOp(Operation *op) {
  std::string target;
  op->getLoc()->walk([&](Location l) {
    if (auto fused = dyn_cast<FusedLoc>(l))
      if (auto s = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
        target = s.str();
    return WalkResult::advance();
  });
  std::string text = "'" + op->getName().getStringRef().str() + "'";
  return target.empty() ? text : text + " (" + target + ")";
}

std::string number(double v) {
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", v);
  return text;
}

/// Computes one op's result range from its operands' and records problems.
class Transfer {
public:
  Transfer(Operation *op, ArrayRef<const ValueRange *> in,
           IntegerRangeAnalysis::Problems &problems)
      : op(op), in(in), problems(problems) {
    for (const ValueRange *r : in)
      mergeInputs(inputs, r->inputs);
  }

  ValueRange run();

private:
  Operation *op;
  ArrayRef<const ValueRange *> in;
  IntegerRangeAnalysis::Problems &problems;
  SmallVector<unsigned, 2> inputs;

  Value result() { return op->getResult(0); }

  /// Records that `op` is inexact, caused by the given inputs' bounds (by
  /// default every operand's).
  void problem(const std::string &message,
               std::optional<ArrayRef<unsigned>> cause = std::nullopt) {
    ArrayRef<unsigned> from = cause ? *cause : ArrayRef<unsigned>(inputs);
    problems[op] = RangeProblem{describeOp(op) + " " + message,
                                SmallVector<unsigned, 2>(from)};
  }

  /// Every integer operand an engine reads must be exact in fp32.
  void requireExactOperands() {
    for (auto [v, r] : llvm::zip(op->getOperands(), in))
      if (isInt(v) && !isBool(v) && !r->fp32Exact) {
        problem("reads integers up to " + number(r->magnitude()) +
                    " in magnitude, which the engines' fp32 datapath rounds",
                ArrayRef<unsigned>(r->inputs));
        return;
      }
  }

  ValueRange bounded(double lo, double hi) {
    ValueRange r;
    r.known = true;
    r.lo = lo;
    r.hi = hi;
    r.inputs = inputs;
    if (isBool(result())) {
      r.lo = std::max(0.0, std::min(lo, 1.0));
      r.hi = std::min(1.0, std::max(hi, 0.0));
      if (!(r.lo <= r.hi))
        r.lo = 0, r.hi = 1;
    } else if (isInt(result())) {
      // int64 is computed as int32 (the DMA saturates): bounded by int32.
      r.lo = std::clamp(std::floor(nanToInf(lo, -kInf)), kInt32Min, kInt32Max);
      r.hi = std::clamp(std::ceil(nanToInf(hi, kInf)), kInt32Min, kInt32Max);
    } else {
      r.lo = nanToInf(lo, -kInf);
      r.hi = nanToInf(hi, kInf);
    }
    return r;
  }

  /// The result of integer arithmetic over [lo, hi]: refused past 2^24.
  ValueRange arithmetic(double lo, double hi) {
    requireExactOperands();
    ValueRange r = bounded(lo, hi);
    if (isInt(result()) && !isBool(result()) &&
        r.magnitude() > kExactIntegerLimit) {
      if (!problems.count(op))
        problem("computes integers up to " + number(r.magnitude()) +
                " in magnitude; the engines compute integers in fp32, exact "
                "only up to 2^24 (16777216)");
      r.fp32Exact = false;
    }
    if (!isInt(result()))
      keepIntegral(r);
    return r;
  }

  /// Float results of integer computations (see ValueRange::integral).
  void keepIntegral(ValueRange &r) {
    bool all = !in.empty() && llvm::all_of(in, [](const ValueRange *v) {
                 return v->integral;
               });
    if (!all || !isa<trn::AddOp, trn::SubOp, trn::MulOp, trn::AddScalarOp,
                     trn::MulScalarOp, trn::ReduceSumOp, trn::ReduceProdOp,
                     trn::CumsumOp, trn::CumprodOp, trn::MatmulOp,
                     trn::Conv2dOp>(op))
      return;
    r.integral = true;
    for (const ValueRange *v : in)
      if (v->rounded && !r.rounded)
        r.rounded = v->rounded;
    if (!r.rounded && r.magnitude() > kExactIntegerLimit)
      r.rounded = op;
  }

  /// An op that returns one of its operands' elements (or `extra`).
  ValueRange choose(ArrayRef<const ValueRange *> from, bool engine,
                    std::optional<double> extra = std::nullopt) {
    if (engine)
      requireExactOperands();
    double lo = extra ? *extra : kInf, hi = extra ? *extra : -kInf;
    bool exact = true, integral = !from.empty();
    Operation *rounded = nullptr;
    for (const ValueRange *r : from) {
      lo = std::min(lo, r->lo);
      hi = std::max(hi, r->hi);
      exact &= r->fp32Exact;
      integral &= r->integral;
      rounded = rounded ? rounded : r->rounded;
    }
    ValueRange r = bounded(lo, hi);
    r.fp32Exact = exact;
    r.integral = integral && !isInt(result());
    r.rounded = r.integral ? rounded : nullptr;
    return r;
  }

  ValueRange convert();
  ValueRange unary(const ValueRange &x);
  ValueRange binary(const ValueRange &a, const ValueRange &b);
  ValueRange compare(const ValueRange &a, const ValueRange &b);
  ValueRange reduce(const ValueRange &x);
};

ValueRange Transfer::convert() {
  const ValueRange &x = *in[0];
  Value src = op->getOperand(0);
  if (isBool(result())) // x != 0: a nonzero integer never rounds to 0
    return bounded(0, 1);
  if (isInt(result()) && isInt(src)) { // DMA: i64 <-> i32, bool -> int
    ValueRange r = bounded(x.lo, x.hi);
    r.fp32Exact = x.fp32Exact;
    return r;
  }
  if (isInt(result())) { // float -> int truncates an fp32 value: exact
    if (x.integral && x.rounded) {
      problems[x.rounded] = RangeProblem{
          describeOp(x.rounded) + " computes integers up to " +
              number(x.magnitude()) +
              " in magnitude in fp32 (an integer reduction, scan or "
              "product); exact only up to 2^24 (16777216)",
          inputs};
    }
    return bounded(std::trunc(x.lo), std::trunc(x.hi));
  }
  ValueRange r = bounded(x.lo, x.hi); // to float: eager rounds the same way
  if (isInt(src)) {
    r.integral = true;
    r.rounded = x.fp32Exact ? nullptr : op;
  } else {
    r.integral = x.integral;
    r.rounded = x.rounded;
  }
  return r;
}

ValueRange Transfer::unary(const ValueRange &x) {
  double lo = x.lo, hi = x.hi;
  // x * f(x) activations: at least min(x, 0) and the function's minimum,
  // at most max(x, 0).
  auto gated = [&](double minimum) {
    return bounded(lo >= 0 ? 0 : std::max(lo, minimum), std::max(hi, 0.0));
  };
  return TypeSwitch<Operation *, ValueRange>(op)
      // exp(-inf) = 0, expm1(-inf) = -1.
      .Case([&](trn::ExpOp) { return bounded(0, std::exp(hi)); })
      .Case([&](trn::Expm1Op) { return bounded(-1, std::expm1(hi)); })
      .Case([&](trn::LogOp) { // log(0) = -inf, log(x < 0) = NaN: not finite
        return bounded(lo > 0 ? std::log(lo) : kLogTiniest, std::log(hi));
      })
      .Case([&](trn::Log1pOp) {
        return bounded(lo > -1 ? std::log1p(lo) : kLogTiniest, std::log1p(hi));
      })
      .Case([&](trn::SqrtOp) {
        return bounded(std::sqrt(std::max(lo, 0.0)), std::sqrt(hi));
      })
      .Case([&](trn::RsqrtOp) { // rsqrt(inf) = 0
        return bounded(0, lo > 0 ? 1 / std::sqrt(lo) : kInf);
      })
      .Case([&](trn::ReciprocalOp) { // 1 / +-inf = 0
        if (lo > 0)
          return bounded(0, 1 / lo);
        return hi < 0 ? bounded(1 / hi, 0) : bounded(-kInf, kInf);
      })
      // Saturating functions reach their limits at +-inf.
      .Case<trn::SinOp, trn::CosOp, trn::TanhOp, trn::ErfOp>(
          [&](auto) { return bounded(-1, 1); })
      .Case([&](trn::SigmoidOp) { return bounded(0, 1); })
      .Case<trn::GeluOp, trn::GeluTanhOp>([&](auto) { return gated(-0.17); })
      .Case([&](trn::SiluOp) { return gated(-0.279); })
      .Case([&](trn::MishOp) { return gated(-0.309); })
      // gelu' in [-0.13, 1.13] (extremes at x = -+sqrt 2), silu' in
      // [-0.10, 1.10] (x = -+2.40).
      .Case<trn::GeluDxOp, trn::SiluDxOp>([&](auto) { return bounded(-0.2, 1.2); })
      .Case<trn::FloorOp, trn::CeilOp, trn::RoundOp, trn::TruncOp>([&](auto) {
        return choose({&x}, /*engine=*/true); // integers stay, floats move < 1
      })
      .Case([&](trn::AbsOp) {
        ValueRange r = choose({&x}, true);
        double m = x.magnitude();
        r.lo = lo <= 0 && hi >= 0 ? 0 : std::min(std::abs(lo), std::abs(hi));
        r.hi = m;
        return r;
      })
      .Case([&](trn::SignOp) {
        requireExactOperands();
        return bounded(-1, 1);
      })
      .Case([&](trn::BitwiseNotOp) { return arithmetic(-hi - 1, -lo - 1); })
      .Case([&](trn::ReluOp) {
        ValueRange r = choose({&x}, true, 0.0);
        r.lo = std::max(lo, 0.0);
        r.hi = std::max(hi, 0.0);
        return r;
      })
      .Case([&](trn::ClampOp c) {
        ValueRange r = choose({&x}, true);
        double cmin = c.getMin() ? c.getMin()->convertToDouble() : -kInf;
        double cmax = c.getMax() ? c.getMax()->convertToDouble() : kInf;
        // -inf clamps to cmin, +inf to cmax.
        r.lo = c.getMin() ? std::min(cmin, cmax) : std::min(lo, cmax);
        r.hi = c.getMax() ? cmax : std::max(hi, cmin);
        if (isInt(result())) // a bound an engine compares in fp32 rounds too
          r = bounded(r.lo, r.hi), r.fp32Exact = x.fp32Exact;
        return r;
      })
      .Case([&](trn::LeakyReluOp l) {
        double s = l.getSlope().convertToDouble();
        auto [plo, phi] = mulBounds(std::min(lo, 0.0), std::min(hi, 0.0), s, s);
        return bounded(std::min(plo, std::max(lo, 0.0)), std::max(phi, hi));
      })
      .Case([&](trn::AddScalarOp a) {
        double v = a.getValue().convertToDouble();
        return arithmetic(lo + v, hi + v);
      })
      .Case([&](trn::MulScalarOp m) {
        double v = m.getValue().convertToDouble();
        auto [plo, phi] = mulBounds(lo, hi, v, v);
        return arithmetic(plo, phi);
      })
      .Case([&](trn::SoftmaxOp s) {
        return s.getLog() ? bounded(-kInf, 0) : bounded(0, 1);
      })
      .Default([&](Operation *) { return arithmetic(-kInf, kInf); });
}

ValueRange Transfer::binary(const ValueRange &a, const ValueRange &b) {
  return TypeSwitch<Operation *, ValueRange>(op)
      .Case([&](trn::AddOp) { return arithmetic(a.lo + b.lo, a.hi + b.hi); })
      .Case([&](trn::SubOp) { return arithmetic(a.lo - b.hi, a.hi - b.lo); })
      .Case([&](trn::MulOp) {
        auto [lo, hi] = mulBounds(a.lo, a.hi, b.lo, b.hi);
        return arithmetic(lo, hi);
      })
      .Case([&](trn::DivOp) {
        if (isInt(result())) { // truncating: |a / b| <= |a| for integers b != 0
          double m = a.magnitude();
          return arithmetic(-m, m);
        }
        if (b.lo > 0 || b.hi < 0) { // a / +-inf = 0
          auto [lo, hi] = mulBounds(a.lo, a.hi, 1 / b.hi, 1 / b.lo);
          return arithmetic(std::min(lo, 0.0), std::max(hi, 0.0));
        }
        return arithmetic(-kInf, kInf);
      })
      .Case([&](trn::FloorDivOp) {
        if (isInt(result())) { // |floor(a / b)| <= |a| for integers b != 0
          double m = a.magnitude();
          return arithmetic(-m, m);
        }
        if (b.lo > 0 || b.hi < 0) { // floor(a / +-inf) is 0 or -1
          auto [lo, hi] = mulBounds(a.lo, a.hi, 1 / b.hi, 1 / b.lo);
          return arithmetic(std::min(std::floor(lo), -1.0),
                            std::max(std::floor(hi), 0.0));
        }
        return arithmetic(-kInf, kInf);
      })
      .Case<trn::RemainderOp, trn::FmodOp>([&](auto) {
        // |fmod(a, b)| <= |a|; |remainder(a, b)| < |b| for finite b, and
        // remainder(a, inf) = a for a >= 0.
        double m = isa<trn::FmodOp>(op) ? std::min(b.magnitude(), a.magnitude())
                   : isInt(result())    ? b.magnitude()
                                        : std::max(a.magnitude(), b.magnitude());
        return arithmetic(-m, m);
      })
      .Case<trn::MaximumOp, trn::MinimumOp>([&](auto) {
        ValueRange r = choose({&a, &b}, /*engine=*/true);
        bool max = isa<trn::MaximumOp>(op);
        r.lo = max ? std::max(a.lo, b.lo) : std::min(a.lo, b.lo);
        r.hi = max ? std::max(a.hi, b.hi) : std::min(a.hi, b.hi);
        return r;
      })
      .Case([&](trn::PowOp) {
        if (b.lo >= 0 && std::isfinite(a.magnitude()) && std::isfinite(b.hi)) {
          double m = std::max(std::pow(a.magnitude(), b.hi),
                              std::pow(a.magnitude(), b.lo));
          m = std::max(m, 1.0); // x^0
          return arithmetic(a.lo >= 0 ? 0 : -m, m);
        }
        return arithmetic(-kInf, kInf);
      })
      .Case<trn::BitwiseAndOp, trn::BitwiseOrOp, trn::BitwiseXorOp>([&](auto) {
        // Two's complement within [-2^k, 2^k) stays within it.
        double m = std::max(a.magnitude(), b.magnitude()) + 1;
        double p = std::isfinite(m) ? std::exp2(std::ceil(std::log2(m))) : kInf;
        return arithmetic(-p, p - 1);
      })
      .Default([&](Operation *) { return arithmetic(-kInf, kInf); });
}

/// A comparison in fp32 is right when one side is exact and below 2^24:
/// rounding is monotone and cannot carry the other side across it.
ValueRange Transfer::compare(const ValueRange &a, const ValueRange &b) {
  auto small = [](const ValueRange &r) {
    return r.fp32Exact && r.magnitude() < kExactIntegerLimit;
  };
  Value lhs = op->getOperand(0);
  if (isInt(lhs) && !isBool(lhs) && !small(a) && !small(b))
    requireExactOperands();
  return bounded(0, 1);
}

ValueRange Transfer::reduce(const ValueRange &x) {
  double n = foldedCount(op);
  return TypeSwitch<Operation *, ValueRange>(op)
      .Case<trn::ReduceSumOp, trn::CumsumOp>([&](auto) {
        auto [lo, hi] = mulBounds(x.lo, x.hi, isa<trn::CumsumOp>(op) ? 1 : n, n);
        return arithmetic(std::min(lo, x.lo), std::max(hi, x.hi));
      })
      .Case<trn::ReduceProdOp, trn::CumprodOp>([&](auto) {
        double m = std::max(std::pow(x.magnitude(), n), 1.0);
        return arithmetic(x.lo >= 0 ? 0 : -m, m);
      })
      .Default([&](Operation *) { return choose({&x}, true); });
}

ValueRange Transfer::run() {
  auto operand = [&](unsigned i) -> const ValueRange & { return *in[i]; };
  return TypeSwitch<Operation *, ValueRange>(op)
      // Views and copies: DMA moves the bytes, nothing rounds.
      .Case<trn::ReshapeOp, trn::BroadcastOp, trn::SliceOp, trn::TransposeOp,
            trn::ConcatOp>([&](auto) { return choose(in, /*engine=*/false); })
      .Case([&](trn::GatherRowsOp g) { // the index is read by an engine
        if (!operand(1).fp32Exact)
          problem("reads row indices that the engines' fp32 datapath rounds",
                  ArrayRef<unsigned>(operand(1).inputs));
        ValueRange r = choose({in[0]}, false, 0.0); // out of range: zero row
        r.inputs = inputs;
        return r;
      })
      .Case([&](trn::ScatterRowsOp s) {
        if (!operand(1).fp32Exact)
          problem("reads row indices that the engines' fp32 datapath rounds",
                  ArrayRef<unsigned>(operand(1).inputs));
        if (!s.getAccumulate())
          return choose({in[0], in[2]}, false);
        double rows = double(cast<RankedTensorType>(s.getIndex().getType())
                                 .getNumElements());
        auto [lo, hi] = mulBounds(operand(2).lo, operand(2).hi, rows, rows);
        return arithmetic(operand(0).lo + std::min(lo, 0.0),
                          operand(0).hi + std::max(hi, 0.0));
      })
      .Case([&](trn::ConvertOp) { return convert(); })
      .Case([&](trn::FullOp f) {
        double v = f.getValue().convertToDouble();
        if (!std::isfinite(v)) // no finite element (a -inf mask fill)
          v = 0;
        ValueRange r = bounded(v, v);
        r.fp32Exact = fp32RoundTrips(r.lo);
        return r;
      })
      .Case([&](trn::IotaOp i) {
        double n = double(cast<RankedTensorType>(i.getType()).getNumElements());
        double first = i.getStart().convertToDouble();
        double last = first + i.getStep().convertToDouble() * std::max(n - 1, 0.0);
        ValueRange r = bounded(std::min(first, last), std::max(first, last));
        r.fp32Exact = r.magnitude() <= kExactIntegerLimit;
        return r;
      })
      .Case([&](trn::RandomOp) { return bounded(0, 1); }) // seeds: exact words
      .Case([&](trn::SelectOp) { // the condition is 0/1
        return choose({in[1], in[2]}, /*engine=*/true);
      })
      .Case([&](trn::TriangleOp) { return choose(in, true, 0.0); })
      .Case([&](trn::ThresholdBackwardOp) { return choose({in[0]}, true, 0.0); })
      .Case<trn::EqOp, trn::NeOp, trn::LtOp, trn::LeOp, trn::GtOp, trn::GeOp>(
          [&](auto) { return compare(operand(0), operand(1)); })
      .Case<trn::LogicalAndOp, trn::LogicalOrOp, trn::LogicalXorOp,
            trn::LogicalNotOp, trn::IsNanOp, trn::IsInfOp>(
          [&](auto) { return bounded(0, 1); }) // x != 0 never rounds to 0
      .Case<trn::MatmulOp, trn::Conv2dOp>([&](auto) {
        double n = foldedCount(op);
        auto [lo, hi] = mulBounds(operand(0).lo, operand(0).hi, operand(1).lo,
                                  operand(1).hi);
        auto [slo, shi] = mulBounds(lo, hi, n, n);
        return arithmetic(slo, shi);
      })
      .Case<trn::ReduceSumOp, trn::ReduceProdOp, trn::ReduceMaxOp,
            trn::ReduceMinOp, trn::CumsumOp, trn::CumprodOp>(
          [&](auto) { return reduce(operand(0)); })
      .Default([&](Operation *) {
        if (op->getNumOperands() == 2)
          return binary(operand(0), operand(1));
        if (op->getNumOperands() == 1)
          return unary(operand(0));
        return arithmetic(-kInf, kInf);
      });
}

} // namespace

ValueRange ValueRange::join(const ValueRange &lhs, const ValueRange &rhs) {
  if (!lhs.known)
    return rhs;
  if (!rhs.known)
    return lhs;
  ValueRange r = lhs;
  r.lo = std::min(lhs.lo, rhs.lo);
  r.hi = std::max(lhs.hi, rhs.hi);
  r.fp32Exact = lhs.fp32Exact && rhs.fp32Exact;
  r.integral = lhs.integral && rhs.integral;
  r.rounded = lhs.rounded ? lhs.rounded : rhs.rounded;
  mergeInputs(r.inputs, rhs.inputs);
  return r;
}

bool ValueRange::operator==(const ValueRange &o) const {
  return known == o.known && lo == o.lo && hi == o.hi &&
         fp32Exact == o.fp32Exact && integral == o.integral &&
         rounded == o.rounded && inputs == o.inputs;
}

void ValueRange::print(llvm::raw_ostream &os) const {
  if (!known) {
    os << "<unknown>";
    return;
  }
  os << "[" << number(lo) << ", " << number(hi) << "]";
  if (!fp32Exact)
    os << " inexact";
  if (integral)
    os << " integral";
}

void IntegerRangeAnalysis::setToEntryState(ValueRangeLattice *lattice) {
  Value v = lattice->getPoint();
  ValueRange r;
  r.known = true;
  if (isBool(v)) {
    r.lo = 0, r.hi = 1;
  } else {
    auto arg = dyn_cast<BlockArgument>(v);
    auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                    : func::FuncOp();
    // Graph inputs are bounded by the analysed bound, or by the magnitude
    // the caller guarantees (trn.max_abs: lifted constants); the caller
    // checks either at run time. Anything else the analysis cannot see may
    // be any int32 (or float).
    auto given = func ? func.getArgAttrOfType<FloatAttr>(arg.getArgNumber(),
                                                          "trn.max_abs")
                      : FloatAttr();
    double m = given ? given.getValueAsDouble()
               : !func ? (isInt(v) ? kInt32Max : kInf)
               : isInt(v) || inputBound < kInt32Max ? inputBound
                                                    : kInf;
    r.lo = -m, r.hi = m;
    r.fp32Exact = !isInt(v) || m <= kExactIntegerLimit ||
                  (given && func.getArgAttr(arg.getArgNumber(), "trn.fp32_exact"));
    if (func && !given)
      r.inputs.push_back(arg.getArgNumber());
  }
  propagateIfChanged(lattice, lattice->join(r));
}

void IntegerRangeAnalysis::visitOperation(
    Operation *op, ArrayRef<const ValueRangeLattice *> operands,
    ArrayRef<ValueRangeLattice *> results) {
  if (!isa<trn::TrnDialect>(op->getDialect()) || op->getNumResults() != 1) {
    setAllToEntryStates(results);
    return;
  }
  SmallVector<const ValueRange *> in;
  for (const ValueRangeLattice *l : operands) {
    if (!l->getValue().known)
      return; // visited again once every operand is known
    in.push_back(&l->getValue());
  }
  ValueRange r = Transfer(op, in, problems).run();
  propagateIfChanged(results[0], results[0]->join(r));
}

IntegerRangeAnalysis::Problems analyzeIntegerRanges(Operation *root,
                                                    double bound) {
  IntegerRangeAnalysis::Problems problems;
  DataFlowSolver solver;
  solver.load<dataflow::DeadCodeAnalysis>();
  solver.load<dataflow::SparseConstantPropagation>();
  solver.load<IntegerRangeAnalysis>(bound, problems);
  if (failed(solver.initializeAndRun(root))) {
    problems[root] = RangeProblem{"the integer range analysis did not converge", {}};
    return problems;
  }
  // Program order (the worklist may visit an op more than once).
  SmallVector<std::pair<Operation *, RangeProblem>> sorted(problems.begin(),
                                                           problems.end());
  llvm::stable_sort(sorted, [](const auto &a, const auto &b) {
    Operation *x = a.first, *y = b.first;
    return x->getBlock() == y->getBlock() && x != y && x->isBeforeInBlock(y);
  });
  IntegerRangeAnalysis::Problems ordered;
  for (auto &[op, p] : sorted)
    ordered[op] = std::move(p);
  return ordered;
}

} // namespace trnc
