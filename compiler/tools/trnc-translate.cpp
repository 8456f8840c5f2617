//===- trnc-translate.cpp - graph JSON -> trn dialect from the shell ------===//
//
// `trnc-translate --import-graph-json graph.json` prints the module the
// importer builds, or the importer's complete message on stderr with exit
// code 1 (what the Python exception would show). The lit tests of
// test/lit/Import/ drive the importer through this tool.
//
//===----------------------------------------------------------------------===//
#include "dialects/Trn/TrnOps.h"
#include "trnc/Compiler/GraphImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

static llvm::cl::opt<bool> printDetails(
    "import-graph-json-details",
    llvm::cl::desc("On an import failure, also print the error kind and the "
                   "structured details JSON on stderr"),
    llvm::cl::init(false));

int main(int argc, char **argv) {
  mlir::TranslateToMLIRRegistration importGraphJson(
      "import-graph-json", "import a graph JSON document (docs/graph-json.md)",
      [](llvm::StringRef input,
         mlir::MLIRContext *context) -> mlir::OwningOpRef<mlir::Operation *> {
        trnc::ImportResult result = trnc::importGraph(
            std::string_view(input.data(), input.size()), *context);
        if (result.ok())
          return mlir::OwningOpRef<mlir::Operation *>(result.module.release());
        llvm::errs() << result.message << "\n";
        if (printDetails)
          llvm::errs() << "error kind: " << result.errorKind << "\n"
                       << "details: " << result.detailsJson() << "\n";
        return nullptr;
      },
      [](mlir::DialectRegistry &registry) {
        registry.insert<trnc::trn::TrnDialect, mlir::func::FuncDialect>();
      });
  return mlir::failed(
             mlir::mlirTranslateMain(argc, argv, "trnc graph JSON translator\n"))
             ? 1
             : 0;
}
