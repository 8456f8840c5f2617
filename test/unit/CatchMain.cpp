//===- CatchMain.cpp - main() of trnc-unit-tests ---------------------------===//
//
// Kept in its own translation unit: Catch2 v2's main costs ~20 s to compile
// and never changes. v3 is a compiled library; its session is run here so
// the executable links against Catch2::Catch2 on either version.
//
//===----------------------------------------------------------------------===//

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_session.hpp>
int main(int argc, char **argv) { return Catch::Session().run(argc, argv); }
#else
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
