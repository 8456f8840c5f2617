//===- BindingTest.cpp - Caller buffers vs. a program's I/O regions -------===//
//
// checkBindings refuses every buffer that does not match its region (count,
// dtype, shape, strides of dims > 1, storage bytes, null), and the verifier
// refuses an I/O region larger than its own layout: together they keep the
// simulator inside the caller's memory (issue 12, defects 1 and 2).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "artifact/Binding.h"

using namespace trnc;
using namespace trnc::test;

namespace {

/// copy: in f32[8, 16] -> out f32[8, 16], both contiguous.
Program copyProgram() {
  Builder b;
  b.p.name = "copy";
  uint32_t in = b.input(DType::F32, 8 * 16 * 4);
  uint32_t out = b.output(DType::F32, 8 * 16 * 4);
  for (uint32_t r : {in, out}) {
    b.p.regions[r].shape = {8, 16};
    b.p.regions[r].strides = {16, 1};
  }
  b.dma(sbuf(DType::F32, 0, 8, 0, {16}), hbm(in, DType::F32, 0, 8, 16, {16}));
  b.dma(hbm(out, DType::F32, 0, 8, 16, {16}), sbuf(DType::F32, 0, 8, 0, {16}));
  return b.p;
}

BufferView view(const void *p, uint64_t bytes, std::string dtype = "f32",
                std::vector<int64_t> shape = {8, 16}, std::vector<int64_t> strides = {16, 1}) {
  return BufferView{p, bytes, std::move(dtype), std::move(shape), std::move(strides)};
}

} // namespace

TEST_CASE("checkBindings accepts exactly the artifact's layout", "[binding]") {
  Program p = copyProgram();
  REQUIRE(errorText(verifyProgram(p)) == "");
  std::vector<float> a(128), b(128);
  CHECK(checkBindings(p, {view(a.data(), 512)}, {view(b.data(), 512)}) == "");
  // Size-1 dims are never stepped over: their stride does not matter.
  Program q = p;
  q.regions[0].shape = {1, 128};
  q.regions[0].strides = {128, 1};
  CHECK(checkBindings(q, {view(a.data(), 512, "f32", {1, 128}, {7, 1})}, {view(b.data(), 512)}) ==
        "");
}

TEST_CASE("checkBindings names every mismatch", "[binding]") {
  Program p = copyProgram();
  std::vector<float> a(128), b(128);
  auto out = std::vector<BufferView>{view(b.data(), 512)};
  CHECK(contains(checkBindings(p, {}, out), "takes 1 inputs, got 0"));
  CHECK(contains(checkBindings(p, {view(a.data(), 512)}, {}), "produces 1 outputs"));
  std::string dtype = checkBindings(p, {view(a.data(), 512, "i32")}, out);
  CHECK(contains(dtype, "input 0: the artifact expects f32[8, 16] strides [16, 1], got i32"));
  CHECK(contains(checkBindings(p, {view(a.data(), 512, "f32", {16, 8}, {8, 1})}, out),
                 "got f32[16, 8]"));
  CHECK(contains(checkBindings(p, {view(a.data(), 512, "f32", {8, 16}, {1, 8})}, out),
                 "strides [1, 8]"));
  CHECK(contains(checkBindings(p, {view(a.data(), 256)}, out),
                 "holds 256 bytes of storage, but the artifact's f32[8, 16] strides [16, 1] "
                 "region spans 512"));
  CHECK(contains(checkBindings(p, {view(nullptr, 512)}, out), "null pointer"));
  CHECK(contains(checkBindings(p, {view(a.data(), 512)}, {view(b.data(), 511)}), "output 0"));
}

TEST_CASE("the verifier refuses an I/O region larger than its layout", "[binding][verify]") {
  Program p = copyProgram();
  // A forged output: shape [1] over the whole region (issue 12: trnc profile
  // allocated one element and the program wrote 512 bytes).
  p.regions[1].shape = {1};
  p.regions[1].strides = {1};
  std::string err = errorText(verifyProgram(p));
  CHECK(contains(err, "region 1 (output): spans 512 bytes, more than the 4 bytes its shape"));
  // A stride-0 output covers one element however long it is.
  p.regions[1].shape = {128};
  p.regions[1].strides = {0};
  CHECK(contains(errorText(verifyProgram(p)), "more than the 4 bytes"));
  p.regions[1].strides = {-1};
  CHECK(contains(errorText(verifyProgram(p)), "invalid layout"));
  p.regions[1].shape = {8, 16};
  p.regions[1].strides = {1};
  CHECK(contains(errorText(verifyProgram(p)), "1 strides for a rank-2 shape"));
  p.regions[1].shape = {int64_t(1) << 50, int64_t(1) << 50};
  p.regions[1].strides = {int64_t(1) << 40, 1};
  CHECK(contains(errorText(verifyProgram(p)), "invalid layout"));
  // Found by trnc-artifact-fuzzer (UBSan): contiguous strides of a huge
  // stride-less shape overflowed int64 while being computed.
  p.regions[1].shape = {int64_t(1) << 32, int64_t(1) << 32, int64_t(1) << 32};
  p.regions[1].strides = {};
  CHECK(contains(errorText(verifyProgram(p)), "invalid layout"));
}

TEST_CASE("ioSignature lists every input and output", "[binding]") {
  CHECK(ioSignature(copyProgram()) == "input 0 f32 [8, 16] strides [16, 1] bytes 512\n"
                                      "output 0 f32 [8, 16] strides [16, 1] bytes 512\n");
}
