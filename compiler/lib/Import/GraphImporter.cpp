//===- GraphImporter.cpp - graph JSON -> func.func @main in trn -----------===//
//
// The driver: reads the document, builds @main, and walks every node once.
// A node whose target has no importer (or whose importer rejects its
// arguments) does not stop the walk: it is recorded and stands in as an
// untyped placeholder so that later nodes are still checked, and the import
// then fails listing every such operator at once. A dtype the backend cannot
// compute in is collected the same way. Only a document that breaks the
// schema, or a node that contradicts its own metadata, stops at once.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/GraphImporter.h"

#include "GraphJson.h"
#include "ImportReport.h"
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;

namespace trnc {
namespace import {
namespace {

constexpr const char *kStrideAttr = "trn.stride";
constexpr const char *kGraphNameAttr = "trn.graph_name";

class GraphBuilder {
public:
  GraphBuilder(const Graph &graph, MLIRContext &context, ImportResult &result)
      : graph(graph), ctx(&context), builder(&context), result(result) {}

  /// Fills `result`; returns normally on every error.
  void run();

private:
  OperatorUse useOf(const Node &node) const;
  Location locOf(const Node &node);
  /// Sets an invalid_graph error; the message names the node when given.
  void invalid(const std::string &what, const Node *node = nullptr);
  void recordUnsupported(const Node &node, const std::string &reason);
  /// Untyped stand-ins for the results of a node that was not imported.
  void placeholder(const Node &node, Location loc);
  bool argsAvailable(const std::vector<Arg> &args) const;
  /// Imports one node; false only on an invalid_graph error.
  bool importNode(const Node &node);
  bool finishOutputs();

  const Graph &graph;
  MLIRContext *ctx;
  OpBuilder builder;
  ImportResult &result;
  ValueMap values;
  /// (target, reason) -> index into result.unsupported (which keeps the
  /// first-use order), for grouping the uses.
  std::map<std::pair<std::string, std::string>, size_t> unsupportedIndex;
};

} // namespace

OperatorUse GraphBuilder::useOf(const Node &node) const {
  OperatorUse use;
  use.node = node.name;
  if (node.loc) {
    use.file = node.loc->file;
    use.line = node.loc->line;
    use.code = node.loc->code;
  }
  return use;
}

/// NameLoc(node, FileLineColLoc(file, line)) fused with the ATen target as
/// metadata, so instructions lowered from the node can name both the user's
/// line and the PyTorch operator (profiles, traces, messages).
Location GraphBuilder::locOf(const Node &node) {
  StringAttr name = StringAttr::get(ctx, node.name);
  Location named =
      node.loc ? NameLoc::get(name, FileLineColLoc::get(ctx, node.loc->file,
                                                        node.loc->line, 0))
               : NameLoc::get(name);
  return FusedLoc::get(ctx, {named}, StringAttr::get(ctx, node.target));
}

void GraphBuilder::invalid(const std::string &what, const Node *node) {
  result.errorKind = "invalid_graph";
  result.message = messageHeader(graph.name) + ": ";
  if (!node) {
    result.message += what;
    return;
  }
  result.message += "node '" + node->name + "' (" + node->target + "): " + what;
  if (node->loc)
    result.message += "\n  at " + describeUse(useOf(*node));
}

void GraphBuilder::recordUnsupported(const Node &node,
                                     const std::string &reason) {
  auto [it, inserted] = unsupportedIndex.insert(
      {{node.target, reason}, result.unsupported.size()});
  if (inserted)
    result.unsupported.push_back({node.target, {}, reason});
  result.unsupported[it->second].uses.push_back(useOf(node));
}

void GraphBuilder::placeholder(const Node &node, Location loc) {
  SmallVector<Type> types;
  for (const auto &meta : node.results)
    if (meta)
      types.push_back(tensorTypeFor(*meta, ctx));
  auto cast = builder.create<UnrealizedConversionCastOp>(loc, types,
                                                         ValueRange{});
  auto &slot = values[node.name];
  unsigned next = 0;
  for (const auto &meta : node.results)
    slot.push_back(meta ? cast.getResult(next++) : Value());
}

bool GraphBuilder::argsAvailable(const std::vector<Arg> &args) const {
  for (const Arg &a : args) {
    if (a.kind == Arg::Kind::List && !argsAvailable(a.list))
      return false;
    if (a.kind != Arg::Kind::Ref)
      continue;
    auto it = values.find(a.text);
    size_t index = a.index < 0 ? 0 : a.index;
    if (it == values.end() || index >= it->second.size() || !it->second[index])
      return false;
  }
  return true;
}

bool GraphBuilder::importNode(const Node &node) {
  Location loc = locOf(node);
  const OpRegistry &registry = OpRegistry::get();
  Importer importer = registry.lookup(node.target);
  MultiImporter multi = registry.lookupMulti(node.target);
  if (!importer && !multi) {
    recordUnsupported(node, "");
    placeholder(node, loc);
    return true;
  }
  if (importer && (!node.hasMeta || node.multiResult || !node.results[0])) {
    invalid("expected the metadata of one tensor result in 'meta'", &node);
    return false;
  }
  if (multi && (!node.hasMeta || !node.multiResult)) {
    invalid("expected a list of result metadata in 'meta'", &node);
    return false;
  }
  SmallVector<RankedTensorType> types;
  for (const auto &meta : node.results) {
    if (meta && !isSupportedDtype(meta->dtype)) {
      result.unsupportedDtypes.push_back(
          {node.name, node.target, meta->dtype, useOf(node)});
      placeholder(node, loc);
      return true;
    }
    types.push_back(meta ? tensorTypeFor(*meta, ctx) : RankedTensorType());
  }
  std::vector<Arg> kwargValues;
  for (const auto &kv : node.kwargs)
    kwargValues.push_back(kv.second);
  if (!argsAvailable(node.args) || !argsAvailable(kwargValues))
    return true; // a producer was not imported; already reported

  NodeContext nctx(builder, loc, node, values);
  for (RankedTensorType t : types)
    if (t) {
      nctx.setResultType(t);
      break;
    }
  nctx.setResultTypes(types);
  FailureOr<SmallVector<Value>> produced = failure();
  if (importer) {
    FailureOr<Value> v = importer(nctx);
    if (succeeded(v))
      produced = SmallVector<Value>{*v};
  } else {
    produced = multi(nctx);
  }
  if (failed(produced)) {
    if (nctx.rejection() == NodeContext::Rejection::Unsupported) {
      recordUnsupported(node, nctx.rejectionMessage());
      placeholder(node, loc);
      return true;
    }
    invalid(nctx.rejectionMessage().empty() ? "the importer failed"
                                            : nctx.rejectionMessage(),
            &node);
    return false;
  }
  if (produced->size() != types.size()) {
    invalid("the importer produced " + std::to_string(produced->size()) +
                " results for " + std::to_string(types.size()) + " in 'meta'",
            &node);
    return false;
  }
  SmallVector<Value, 1> results;
  for (auto [v, type] : llvm::zip(*produced, types)) {
    if (!type || !v) {
      results.push_back(Value());
      continue;
    }
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    if (shape != type.getShape()) {
      invalid("its meta says shape " + formatShape(type.getShape()) +
                  " but the operator produces " + formatShape(shape),
              &node);
      return false;
    }
    results.push_back(nctx.convert(v, type.getElementType()));
  }
  values[node.name] = std::move(results);
  return true;
}

bool GraphBuilder::finishOutputs() {
  SmallVector<Value> results;
  for (auto [i, out] : llvm::enumerate(graph.outputs)) {
    auto it = values.find(out.node);
    size_t index = out.index < 0 ? 0 : out.index;
    if (it == values.end() || index >= it->second.size() || !it->second[index])
      return true; // its producer was not imported; already reported
    Value v = it->second[index];
    RankedTensorType declared = tensorTypeFor(out.meta, ctx);
    if (v.getType() != declared) {
      auto describe = [&](RankedTensorType t) {
        std::string s = formatShape(t.getShape()) + " ";
        for (const char *dtype : {"float32", "bfloat16", "float16"})
          if (elementTypeFor(dtype, ctx) == t.getElementType())
            return s + dtype;
        llvm::raw_string_ostream os(s);
        os << t.getElementType();
        return os.str();
      };
      invalid("outputs[" + std::to_string(i) + "] declares " +
              describe(declared) + " but node '" + out.node + "' is " +
              describe(cast<RankedTensorType>(v.getType())));
      return false;
    }
    results.push_back(v);
  }
  if (!result.unsupported.empty() || !result.unsupportedDtypes.empty())
    return true;
  builder.create<func::ReturnOp>(NameLoc::get(StringAttr::get(ctx, "output")),
                                 results);
  return true;
}

void GraphBuilder::run() {
  Location graphLoc = NameLoc::get(StringAttr::get(ctx, graph.name));
  OwningOpRef<ModuleOp> module = ModuleOp::create(graphLoc);

  SmallVector<Type> argTypes, resultTypes;
  for (const GraphInput &in : graph.inputs)
    argTypes.push_back(tensorTypeFor(in.meta, ctx));
  for (const GraphOutput &out : graph.outputs)
    resultTypes.push_back(tensorTypeFor(out.meta, ctx));
  auto func = func::FuncOp::create(graphLoc, "main",
                                   builder.getFunctionType(argTypes, resultTypes));
  module->push_back(func);
  func->setAttr(kGraphNameAttr, builder.getStringAttr(graph.name));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToEnd(entry);

  for (auto [i, in] : llvm::enumerate(graph.inputs)) {
    BlockArgument arg = entry->getArgument(i);
    arg.setLoc(NameLoc::get(StringAttr::get(ctx, in.name)));
    func.setArgAttr(i, kStrideAttr, builder.getDenseI64ArrayAttr(in.meta.stride));
    if (in.maxAbs >= 0) // the integer range check's bound for this input
      func.setArgAttr(i, "trn.max_abs", builder.getF64FloatAttr(in.maxAbs));
    if (in.fp32Exact)
      func.setArgAttr(i, "trn.fp32_exact", builder.getUnitAttr());
    values[in.name] = {arg};
    if (!isSupportedDtype(in.meta.dtype))
      result.unsupportedDtypes.push_back({in.name, "", in.meta.dtype, {}});
  }
  for (auto [i, out] : llvm::enumerate(graph.outputs))
    func.setResultAttr(i, kStrideAttr,
                       builder.getDenseI64ArrayAttr(out.meta.stride));

  for (const Node &node : graph.nodes)
    if (!importNode(node))
      return;
  if (!finishOutputs())
    return;

  if (!result.unsupported.empty()) {
    result.errorKind = "unsupported_operator";
    result.message = formatUnsupportedOperators(graph.name, result.unsupported);
    return;
  }
  if (!result.unsupportedDtypes.empty()) {
    result.errorKind = "unsupported_dtype";
    result.message = formatUnsupportedDtypes(graph.name, result.unsupportedDtypes);
    return;
  }

  // The importers build only verified shapes; a failure here is a bug in an
  // importer, reported with the offending op's location rather than crashing.
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag.str() << "\n";
      return success();
    });
    if (failed(verify(*module))) {
      invalid("internal error: the imported IR does not verify (please "
              "report this importer bug):\n" +
              diagnostics);
      return;
    }
  }
  result.module = std::move(module);
}

} // namespace import

namespace {

template <typename Document>
ImportResult importDocument(const Document &document, MLIRContext &context) {
  ImportResult result;
  import::Graph graph;
  std::string error;
  if (!import::readGraph(document, graph, error)) {
    result.errorKind = "invalid_graph";
    result.message = import::messageHeader(graph.name) + ": " + error;
    return result;
  }
  context.loadDialect<trn::TrnDialect, func::FuncDialect>();
  import::GraphBuilder(graph, context, result).run();
  return result;
}

} // namespace

ImportResult importGraph(std::string_view json, MLIRContext &context) {
  return importDocument(json, context);
}

ImportResult importGraph(const nlohmann::json &doc, MLIRContext &context) {
  return importDocument(doc, context);
}

} // namespace trnc
