//===- ImportReport.h - the messages an import failure shows --------*- C++ -*-===//
//
// Formats the complete human-readable messages of ImportResult (what the
// user's Python exception shows), one function per error kind.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "trnc/Compiler/GraphImporter.h"

#include <string>
#include <vector>

namespace trnc::import {

/// "trnc cannot compile graph 'forward_0'" (or "this graph" when unnamed).
std::string messageHeader(const std::string &graphName);
/// "/home/u/model.py:12: y = f(x)", or "node 'y' (no source location)".
std::string describeUse(const OperatorUse &use);
std::string formatUnsupportedOperators(
    const std::string &graphName, const std::vector<UnsupportedOperator> &ops);
std::string formatUnsupportedDtypes(const std::string &graphName,
                                    const std::vector<UnsupportedDtype> &dtypes);

} // namespace trnc::import
