//===- MakeSeeds.cpp - Write the fuzzer's seed corpus ---------------------===//
//
// `trnc-fuzz-seeds DIR` writes each seed program (SeedPrograms.h) as
// DIR/<name>.trnc, so the corpus always matches the current format.
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"
#include "fuzz/SeedPrograms.h"

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  for (const trnc::Program &p : trnc::fuzz::seedPrograms()) {
    std::vector<uint8_t> bytes = trnc::writeArtifact(p);
    std::string path = std::string(argv[1]) + "/" + p.name + ".trnc";
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
    std::fclose(f);
  }
  return 0;
}
