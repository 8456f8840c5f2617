//===- Identity.cpp - the compiler's version and build identity -----------===//
//
// compilerIdentity() is part of every cache key, so it must change whenever
// the code that produces artifacts changes and stay the same otherwise: the
// version from CMake plus TRNC_BUILD_ID (git commit, or commit + a hash of
// the sources when they are uncommitted; see BuildId.cmake). Timestamps
// such as __DATE__ would make every rebuild a cache miss.
//
//===----------------------------------------------------------------------===//
#include "trnc/Compiler/Compile.h"

#include "BuildId.inc"

#ifndef TRNC_VERSION_STRING
#define TRNC_VERSION_STRING "0.0.0"
#endif

std::string trnc::compilerIdentity() {
  return std::string("trnc ") + TRNC_VERSION_STRING + " (" + TRNC_BUILD_ID +
         ")";
}
