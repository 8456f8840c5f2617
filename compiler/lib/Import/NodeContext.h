//===- NodeContext.h - what an op importer sees of one FX node ------*- C++ -*-===//
//
// Op importers (one function per ATen target, grouped by category in
// *Importers.cpp) read their arguments through NodeContext, build trn ops
// with its helpers (which make broadcasting and dtype conversion explicit),
// and report rejections through it: `unsupported` when the operator exists
// but these arguments have no lowering yet (the node then joins the
// unsupported-operator list), `invalid` when the node contradicts the ATen
// schema or its own metadata.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "GraphJson.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace trnc::import {

/// The results of every imported input and node, by name.
using ValueMap = llvm::StringMap<llvm::SmallVector<mlir::Value, 1>>;

/// MLIR element type of a dtype name (any known dtype, supported or not).
mlir::Type elementTypeFor(llvm::StringRef dtype, mlir::MLIRContext *context);
mlir::RankedTensorType tensorTypeFor(const TensorMeta &meta,
                                     mlir::MLIRContext *context);
/// "[8, 16]".
std::string formatShape(llvm::ArrayRef<int64_t> shape);
/// Numpy broadcast of `shapes` (trailing dimensions align; 1 stretches).
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// The ranked tensor type of a value an importer built or read.
inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// Position of an argument that ATen declares keyword-only (`alpha`, `dtype`).
inline constexpr unsigned kKeywordOnly = ~0u;

class NodeContext {
public:
  enum class Rejection { None, Unsupported, Invalid };

  NodeContext(mlir::OpBuilder &builder, mlir::Location loc, const Node &node,
              const ValueMap &values)
      : builder(builder), loc(loc), node(node), values(values) {}

  mlir::OpBuilder &builder;
  const mlir::Location loc;
  const Node &node;

  //===--- Arguments: positional `pos`, else keyword `name` -------------===//

  /// Null when the argument is absent.
  const Arg *arg(unsigned pos, llvm::StringRef name) const;
  mlir::FailureOr<mlir::Value> tensor(unsigned pos, llvm::StringRef name);
  /// A list of tensors (`cat`'s `tensors`).
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  tensorList(unsigned pos, llvm::StringRef name);
  /// A Python scalar (int, float or bool). A tensor here is `unsupported`.
  mlir::FailureOr<double> scalar(unsigned pos, llvm::StringRef name,
                                 std::optional<double> dflt = std::nullopt);
  mlir::FailureOr<int64_t> integer(unsigned pos, llvm::StringRef name,
                                   std::optional<int64_t> dflt = std::nullopt);
  mlir::FailureOr<bool> boolean(unsigned pos, llvm::StringRef name,
                                std::optional<bool> dflt = std::nullopt);
  /// A list of ints (or one int); absent or None gives `dflt` when set.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  intList(unsigned pos, llvm::StringRef name,
          std::optional<llvm::SmallVector<int64_t>> dflt = std::nullopt);
  /// `dim` in [-rank, rank) made non-negative (a 0-d tensor accepts -1 and 0).
  mlir::FailureOr<int64_t> normalizeDim(int64_t dim, int64_t rank);

  //===--- The node's result (from `meta`) --------------------------------===//

  mlir::RankedTensorType resultType() const { return resultTy; }
  mlir::Type resultElementType() const { return resultTy.getElementType(); }
  llvm::ArrayRef<int64_t> resultShape() const { return resultTy.getShape(); }
  void setResultType(mlir::RankedTensorType type) { resultTy = type; }
  /// Every result of a multi-output node, in order; a null type where the
  /// op returns None (MultiImporters return a null Value there).
  llvm::ArrayRef<mlir::RankedTensorType> resultTypes() const {
    return resultTys;
  }
  void setResultTypes(llvm::ArrayRef<mlir::RankedTensorType> types) {
    resultTys.assign(types.begin(), types.end());
  }

  //===--- Builders (each a no-op when there is nothing to do) -----------===//

  mlir::Value convert(mlir::Value v, mlir::Type elementType);
  mlir::Value broadcast(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value v, llvm::ArrayRef<int64_t> permutation);
  mlir::Value mulScalar(mlir::Value v, double value);
  mlir::Value addScalar(mlir::Value v, double value);
  mlir::Value full(mlir::RankedTensorType type, double value);
  /// Converts every operand to the result element type and broadcasts all
  /// of them to their common numpy shape.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  elementwiseOperands(llvm::ArrayRef<mlir::Value> operands);
  template <typename OpTy, typename... Args>
  mlir::Value create(Args &&...args) {
    return builder.create<OpTy>(loc, std::forward<Args>(args)...).getResult();
  }
  /// A same-typed binary op of two operands already converted and broadcast
  /// to one type (the normalization importers' arithmetic).
  template <typename OpTy> mlir::Value binary(mlir::Value a, mlir::Value b) {
    return create<OpTy>(a.getType(), a, b);
  }

  //===--- Rejections -----------------------------------------------------===//

  mlir::LogicalResult unsupported(const llvm::Twine &reason);
  mlir::LogicalResult invalid(const llvm::Twine &reason);
  Rejection rejection() const { return rejectionKind; }
  const std::string &rejectionMessage() const { return message; }

private:
  std::string argName(unsigned pos, llvm::StringRef name) const;

  const ValueMap &values;
  mlir::RankedTensorType resultTy;
  llvm::SmallVector<mlir::RankedTensorType> resultTys;
  Rejection rejectionKind = Rejection::None;
  std::string message;
};

/// Builds the trn ops of one node; the returned value may differ from the
/// node's meta only in element type (the caller then adds `trn.convert`).
using Importer = mlir::FailureOr<mlir::Value> (*)(NodeContext &);
/// The same for a multi-output node (`meta` is a list; consumers use
/// `{"node": n, "index": i}`): one value per result, null where meta is null.
using MultiImporter =
    mlir::FailureOr<llvm::SmallVector<mlir::Value>> (*)(NodeContext &);

/// ATen target string ("aten.mm.default") -> importer.
class OpRegistry {
public:
  static const OpRegistry &get();
  void add(llvm::StringRef target, Importer importer);
  Importer lookup(llvm::StringRef target) const;
  void addMulti(llvm::StringRef target, MultiImporter importer);
  MultiImporter lookupMulti(llvm::StringRef target) const;

private:
  llvm::StringMap<Importer> table;
  llvm::StringMap<MultiImporter> multiTable;
};

void registerElementwiseImporters(OpRegistry &registry);
void registerMatmulImporters(OpRegistry &registry);
void registerLayoutImporters(OpRegistry &registry);
void registerReductionImporters(OpRegistry &registry);
void registerBatchNormImporters(OpRegistry &registry);
void registerLayerNormImporters(OpRegistry &registry);
void registerCreationImporters(OpRegistry &registry);
void registerCollectiveImporters(OpRegistry &registry);

} // namespace trnc::import
