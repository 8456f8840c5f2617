//===- IntegerRange.h - Value ranges of trn tensors -------------*- C++ -*-===//
//
// The engines compute every integer through their fp32 ALUs (isa/Isa.h,
// DType): exact while |value| <= 2^24, silently rounded beyond. IntegerRange
// is a sparse forward dataflow analysis over the trn graph (the
// IntegerRangeAnalysis pattern of MLIR, with trn's own transfer functions)
// that bounds every tensor's elements and finds the ops whose integers can
// leave that range. `trnc-trn-integer-range` (IntegerRangeCheck.cpp) uses it
// to prove a graph exact, to refuse it naming the op, or to derive the bound
// its integer inputs must respect at call time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Analysis/DataFlow/SparseAnalysis.h"
#include "mlir/IR/Operation.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"

#include <limits>
#include <string>

namespace trnc {

/// Integers of magnitude up to this are exact in fp32 (its 24-bit significand).
constexpr double kExactIntegerLimit = 16777216.0;

/// What is known about every element of one tensor value: bounds of every
/// element (float tensors: of every finite element; see IntegerRange.cpp).
struct ValueRange {
  bool known = false;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  /// Integer tensors: every element reads into the fp32 datapath unchanged
  /// (|v| <= 2^24, or a value that came from an fp32 number).
  bool fp32Exact = true;
  /// Float tensors: an integer computation done in fp32 for an integer ATen
  /// op (int -> float convert, then reductions, scans or products); the
  /// importer converts the result back to an integer.
  bool integral = false;
  /// Integral floats: the first op whose results may pass 2^24 (they were
  /// rounded), null while the chain is exact.
  mlir::Operation *rounded = nullptr;
  /// Integer graph inputs (func argument numbers) the bounds depend on.
  llvm::SmallVector<unsigned, 2> inputs;

  double magnitude() const { return std::max(std::abs(lo), std::abs(hi)); }

  static ValueRange join(const ValueRange &lhs, const ValueRange &rhs);
  bool operator==(const ValueRange &other) const;
  void print(llvm::raw_ostream &os) const;
};

class ValueRangeLattice : public mlir::dataflow::Lattice<ValueRange> {
public:
  using Lattice::Lattice;
};

/// An op whose integers are not exact under the analysed input bound.
struct RangeProblem {
  std::string message;
  llvm::SmallVector<unsigned, 2> inputs; // the integer inputs involved
};

/// Bounds every trn value, with integer graph inputs assumed within
/// [-inputBound, inputBound]; ops found inexact are recorded in `problems`.
class IntegerRangeAnalysis
    : public mlir::dataflow::SparseForwardDataFlowAnalysis<ValueRangeLattice> {
public:
  using Problems = llvm::MapVector<mlir::Operation *, RangeProblem>;

  IntegerRangeAnalysis(mlir::DataFlowSolver &solver, double inputBound,
                       Problems &problems)
      : SparseForwardDataFlowAnalysis(solver), inputBound(inputBound),
        problems(problems) {}

  void setToEntryState(ValueRangeLattice *lattice) override;
  void visitOperation(mlir::Operation *op,
                      llvm::ArrayRef<const ValueRangeLattice *> operands,
                      llvm::ArrayRef<ValueRangeLattice *> results) override;

private:
  double inputBound;
  Problems &problems;
};

/// Runs the analysis over `root` with integer inputs in [-bound, bound];
/// returns the inexact ops in program order.
IntegerRangeAnalysis::Problems analyzeIntegerRanges(mlir::Operation *root,
                                                    double bound);

} // namespace trnc
