//===- trnc-compile.cpp - graph JSON -> artifact, from the shell ----------===//
//
//   trnc-compile graph.json [--target trn2] [-o out.trnc] [--disassemble]
//
// Runs exactly what torch.compile runs (compileGraph). On failure prints the
// captured message (with the trnc-opt reproducer when --dump-dir is given)
// and exits 1. `--disassemble` prints the per-engine streams (lit tests).
//
//===----------------------------------------------------------------------===//
#include "artifact/Artifact.h"
#include "trnc/Compiler/Compile.h"
#include "trnc/Compiler/Emit.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<graph.json>"));
static cl::opt<std::string> target("target", cl::init("trn2"),
                                   cl::desc("NeuronCore target"));
static cl::opt<std::string> outputFile("o", cl::desc("artifact to write"),
                                       cl::value_desc("file"));
static cl::opt<bool> disassembleOpt("disassemble",
                                    cl::desc("print the instruction streams"));
static cl::opt<unsigned> lnc("lnc", cl::init(1),
                            cl::desc("logical-core degree: 2 splits the "
                                     "program over two physical cores "
                                     "(trn2/trn3)"));
static cl::opt<std::string> dumpDir("dump-dir",
                                    cl::desc("on failure, dump the input IR "
                                             "here"));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "trnc graph compiler\n");

  ErrorOr<std::unique_ptr<MemoryBuffer>> input =
      MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!input) {
    WithColor::error() << "cannot read " << inputFile << ": "
                       << input.getError().message() << "\n";
    return 1;
  }
  trnc::CompileOptions options;
  options.target = target;
  options.dumpDir = dumpDir;
  options.lnc = lnc;
  trnc::CompileResult result =
      trnc::compileGraph((*input)->getBuffer().str(), options);
  if (!result.ok) {
    errs() << result.errorKind << ": " << result.message;
    if (!result.message.empty() && result.message.back() != '\n')
      errs() << "\n";
    return 1;
  }
  if (disassembleOpt)
    outs() << trnc::disassemble(result.program);
  if (!outputFile.empty()) {
    std::error_code ec;
    ToolOutputFile out(outputFile, ec, sys::fs::OF_None);
    if (ec) {
      WithColor::error() << "cannot write " << outputFile << ": "
                         << ec.message() << "\n";
      return 1;
    }
    std::vector<uint8_t> bytes = trnc::writeArtifact(result.program);
    out.os().write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    out.keep();
  }
  return 0;
}
