//===- NodeContext.cpp - argument access and trn builders for importers ---===//
//
// The shared vocabulary of the op importers: typed argument access with
// ATen's positional-or-keyword rules, and builders that make broadcasting
// and dtype conversion explicit ops.
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace trnc::import {

Type elementTypeFor(llvm::StringRef dtype, MLIRContext *ctx) {
  Builder b(ctx);
  if (dtype == "float32")
    return b.getF32Type();
  if (dtype == "bfloat16")
    return b.getBF16Type();
  if (dtype == "float16")
    return b.getF16Type();
  if (dtype == "float64")
    return b.getF64Type();
  if (dtype == "bool")
    return b.getI1Type();
  if (dtype == "complex32")
    return ComplexType::get(b.getF16Type());
  if (dtype == "complex64")
    return ComplexType::get(b.getF32Type());
  if (dtype == "complex128")
    return ComplexType::get(b.getF64Type());
  if (dtype == "float8_e4m3fn")
    return b.getFloat8E4M3FNType();
  if (dtype == "float8_e5m2")
    return b.getFloat8E5M2Type();
  if (dtype == "float8_e4m3fnuz")
    return b.getFloat8E4M3FNUZType();
  if (dtype == "float8_e5m2fnuz")
    return b.getFloat8E5M2FNUZType();
  bool isUnsigned = dtype.consume_front("uint");
  unsigned width = 0;
  if ((isUnsigned || dtype.consume_front("int")) && !dtype.getAsInteger(10, width))
    return IntegerType::get(ctx, width,
                            isUnsigned ? IntegerType::Unsigned
                                       : IntegerType::Signless);
  return {};
}

RankedTensorType tensorTypeFor(const TensorMeta &meta, MLIRContext *ctx) {
  return RankedTensorType::get(meta.shape, elementTypeFor(meta.dtype, ctx));
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

std::optional<SmallVector<int64_t>>
broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> out(rank, 1);
  for (ArrayRef<int64_t> s : shapes) {
    size_t lead = rank - s.size();
    for (auto [i, d] : llvm::enumerate(s)) {
      int64_t &o = out[lead + i];
      if (d == o || d == 1)
        continue;
      if (o != 1)
        return std::nullopt;
      o = d;
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

const Arg *NodeContext::arg(unsigned pos, llvm::StringRef name) const {
  if (pos != kKeywordOnly && pos < node.args.size())
    return &node.args[pos];
  for (const auto &[key, value] : node.kwargs)
    if (key == name)
      return &value;
  return nullptr;
}

std::string NodeContext::argName(unsigned pos, llvm::StringRef name) const {
  return "'" + name.str() + "'" +
         (pos == kKeywordOnly ? "" : " (argument " + std::to_string(pos) + ")");
}

FailureOr<Value> NodeContext::tensor(unsigned pos, llvm::StringRef name) {
  const Arg *a = arg(pos, name);
  if (!a)
    return invalid("missing tensor argument " + argName(pos, name));
  if (!a->isTensor())
    return invalid("expects a tensor for " + argName(pos, name) + ", got " +
                   a->describe());
  auto it = values.find(a->text);
  size_t index = a->index < 0 ? 0 : static_cast<size_t>(a->index);
  if (it == values.end() || index >= it->second.size() || !it->second[index])
    return invalid("argument " + argName(pos, name) + " refers to '" +
                   a->text + "', which has no tensor value");
  return it->second[index];
}

FailureOr<SmallVector<Value>> NodeContext::tensorList(unsigned pos,
                                                     llvm::StringRef name) {
  const Arg *a = arg(pos, name);
  if (!a || a->kind != Arg::Kind::List)
    return invalid("expects a list of tensors for " + argName(pos, name));
  SmallVector<Value> result;
  for (const Arg &e : a->list) {
    auto it = e.isTensor() ? values.find(e.text) : values.end();
    size_t index = e.index < 0 ? 0 : static_cast<size_t>(e.index);
    if (it == values.end() || index >= it->second.size() || !it->second[index])
      return invalid("an element of " + argName(pos, name) +
                     " is not an imported tensor");
    result.push_back(it->second[index]);
  }
  return result;
}

FailureOr<double> NodeContext::scalar(unsigned pos, llvm::StringRef name,
                                      std::optional<double> dflt) {
  const Arg *a = arg(pos, name);
  if ((!a || a->kind == Arg::Kind::None) && dflt)
    return *dflt;
  if (!a)
    return invalid("missing scalar argument " + argName(pos, name));
  if (a->isTensor())
    return unsupported(argName(pos, name) +
                       " is a tensor; only a Python scalar is supported");
  if (!a->isNumber())
    return invalid("expects a number for " + argName(pos, name) + ", got " +
                   a->describe());
  return a->asDouble();
}

FailureOr<int64_t> NodeContext::integer(unsigned pos, llvm::StringRef name,
                                        std::optional<int64_t> dflt) {
  const Arg *a = arg(pos, name);
  if ((!a || a->kind == Arg::Kind::None) && dflt)
    return *dflt;
  if (!a || a->kind != Arg::Kind::Int)
    return invalid("expects an int for " + argName(pos, name) + ", got " +
                   (a ? a->describe() : std::string("nothing")));
  return a->integer;
}

FailureOr<bool> NodeContext::boolean(unsigned pos, llvm::StringRef name,
                                     std::optional<bool> dflt) {
  const Arg *a = arg(pos, name);
  if ((!a || a->kind == Arg::Kind::None) && dflt)
    return *dflt;
  if (!a || a->kind != Arg::Kind::Bool)
    return invalid("expects a bool for " + argName(pos, name) + ", got " +
                   (a ? a->describe() : std::string("nothing")));
  return a->boolean;
}

FailureOr<SmallVector<int64_t>>
NodeContext::intList(unsigned pos, llvm::StringRef name,
                     std::optional<SmallVector<int64_t>> dflt) {
  const Arg *a = arg(pos, name);
  if ((!a || a->kind == Arg::Kind::None) && dflt)
    return *dflt;
  if (a && a->kind == Arg::Kind::Int)
    return SmallVector<int64_t>{a->integer};
  if (!a || a->kind != Arg::Kind::List)
    return invalid("expects a list of ints for " + argName(pos, name) +
                   ", got " + (a ? a->describe() : std::string("nothing")));
  SmallVector<int64_t> out;
  for (const Arg &e : a->list) {
    if (e.kind != Arg::Kind::Int)
      return invalid("expects a list of ints for " + argName(pos, name) +
                     ", got an element that is " + e.describe());
    out.push_back(e.integer);
  }
  return out;
}

FailureOr<int64_t> NodeContext::normalizeDim(int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1); // ATen wraps 0-d like 1-d
  if (dim < -r || dim >= r)
    return invalid("dimension " + std::to_string(dim) +
                   " is out of range for a tensor of rank " +
                   std::to_string(rank));
  return dim < 0 ? dim + r : dim;
}

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

Value NodeContext::convert(Value v, Type elementType) {
  RankedTensorType t = typeOf(v);
  if (t.getElementType() == elementType)
    return v;
  return create<trn::ConvertOp>(t.clone(elementType), v);
}

Value NodeContext::broadcast(Value v, ArrayRef<int64_t> shape) {
  RankedTensorType t = typeOf(v);
  if (t.getShape() == shape)
    return v;
  return create<trn::BroadcastOp>(t.clone(shape), v);
}

Value NodeContext::reshape(Value v, ArrayRef<int64_t> shape) {
  RankedTensorType t = typeOf(v);
  if (t.getShape() == shape)
    return v;
  return create<trn::ReshapeOp>(t.clone(shape), v);
}

Value NodeContext::transpose(Value v, ArrayRef<int64_t> permutation) {
  RankedTensorType t = typeOf(v);
  bool identity = true;
  SmallVector<int64_t> shape;
  for (auto [i, p] : llvm::enumerate(permutation)) {
    identity &= static_cast<int64_t>(i) == p;
    shape.push_back(t.getDimSize(p));
  }
  if (identity)
    return v;
  return create<trn::TransposeOp>(t.clone(shape), v,
                                  builder.getDenseI64ArrayAttr(permutation));
}

Value NodeContext::mulScalar(Value v, double value) {
  if (value == 1.0)
    return v;
  return create<trn::MulScalarOp>(v.getType(), v, builder.getF64FloatAttr(value));
}

Value NodeContext::addScalar(Value v, double value) {
  // x + 0.0 is not an identity for x = -0.0, but ATen does not special-case
  // it either once alpha is folded in; keep the op.
  return create<trn::AddScalarOp>(v.getType(), v, builder.getF64FloatAttr(value));
}

Value NodeContext::full(RankedTensorType type, double value) {
  return create<trn::FullOp>(type, builder.getF64FloatAttr(value));
}

FailureOr<SmallVector<Value>>
NodeContext::elementwiseOperands(ArrayRef<Value> operands) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : operands)
    shapes.push_back(typeOf(v).getShape());
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (!shape) {
    std::string list;
    for (auto [i, s] : llvm::enumerate(shapes))
      list += (i ? " and " : "") + formatShape(s);
    return invalid("operand shapes " + list + " do not broadcast");
  }
  SmallVector<Value> out;
  for (Value v : operands)
    out.push_back(broadcast(convert(v, resultElementType()), *shape));
  return out;
}

//===----------------------------------------------------------------------===//
// Rejections
//===----------------------------------------------------------------------===//

LogicalResult NodeContext::unsupported(const llvm::Twine &reason) {
  if (rejectionKind == Rejection::None) {
    rejectionKind = Rejection::Unsupported;
    message = reason.str();
  }
  return failure();
}

LogicalResult NodeContext::invalid(const llvm::Twine &reason) {
  if (rejectionKind == Rejection::None) {
    rejectionKind = Rejection::Invalid;
    message = reason.str();
  }
  return failure();
}

//===----------------------------------------------------------------------===//
// OpRegistry
//===----------------------------------------------------------------------===//

const OpRegistry &OpRegistry::get() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerElementwiseImporters(r);
    registerMatmulImporters(r);
    registerLayoutImporters(r);
    registerReductionImporters(r);
    registerBatchNormImporters(r);
    registerLayerNormImporters(r);
    registerCreationImporters(r);
    registerCollectiveImporters(r);
    return r;
  }();
  return registry;
}

void OpRegistry::add(llvm::StringRef target, Importer importer) {
  bool inserted = table.try_emplace(target, importer).second;
  assert(inserted && "two importers for one ATen target");
  (void)inserted;
}

Importer OpRegistry::lookup(llvm::StringRef target) const {
  auto it = table.find(target);
  return it == table.end() ? nullptr : it->second;
}

void OpRegistry::addMulti(llvm::StringRef target, MultiImporter importer) {
  bool inserted = multiTable.try_emplace(target, importer).second;
  assert(inserted && !table.count(target) && "two importers for one target");
  (void)inserted;
}

MultiImporter OpRegistry::lookupMulti(llvm::StringRef target) const {
  auto it = multiTable.find(target);
  return it == multiTable.end() ? nullptr : it->second;
}

} // namespace trnc::import
