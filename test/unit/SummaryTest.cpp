//===- SummaryTest.cpp - The human summary and its verdict ----------------===//
//
// Verdicts on hand-made profiles (compute-, memory-, latency-bound at and
// around the AWS performance-guide thresholds) and the summary's content.
//
//===----------------------------------------------------------------------===//

#include "ProfileTestUtil.h"

#include <algorithm>

#include "profile/ProfileFormat.h"
#include "profile/Summary.h"

using namespace trnc;
using namespace trnc::test;
using profile::Verdict;

TEST_CASE("verdict: an engine >= 90% busy is compute-bound", "[summary]") {
  Profile p = handMadeProfile();
  p.engines[size_t(Engine::Vector)].utilisation = 0.90;
  Verdict v = profile::classify(p);
  CHECK(v.kind == Verdict::Kind::ComputeBound);
  CHECK(v.busiestEngine == Engine::Vector);
  CHECK(contains(v.reason, "vector engine 90.0% busy"));
  p.engines[size_t(Engine::Vector)].utilisation = 0.899;
  CHECK(profile::classify(p).kind != Verdict::Kind::ComputeBound);
}

TEST_CASE("verdict: DMA busy time alone is not compute-bound", "[summary]") {
  Profile p = handMadeProfile(); // DMA engine 95% busy, MBU ~1%
  CHECK(p.engines[size_t(Engine::Dma)].utilisation > 0.9);
  CHECK(profile::classify(p).kind == Verdict::Kind::LatencyBound);
}

TEST_CASE("verdict: latency-bound names DMA when the queues are what the step waits on",
          "[summary]") {
  Profile p = handMadeProfile(); // DMA engine 95% busy, MBU ~1%
  Verdict v = profile::classify(p);
  CHECK(contains(v.reason, "waiting on DMA"));
  CHECK(contains(v.reason, "DMA transfers in flight 95.0% of the time"));
  p.engines[size_t(Engine::Dma)].utilisation = 0.5;
  CHECK_FALSE(contains(profile::classify(p).reason, "DMA"));
}

TEST_CASE("verdict: >= 60% of memory bandwidth is memory-bound", "[summary]") {
  Profile p = handMadeProfile();
  p.mbu = 0.6;
  Verdict v = profile::classify(p);
  CHECK(v.kind == Verdict::Kind::MemoryBound);
  CHECK(contains(v.reason, "60.0% of bandwidth"));
  // Both saturated: the engine wins, and the text says memory is high too.
  p.engines[size_t(Engine::Tensor)].utilisation = 0.95;
  v = profile::classify(p);
  CHECK(v.kind == Verdict::Kind::ComputeBound);
  CHECK(contains(v.reason, "memory is near its limit too"));
}

TEST_CASE("verdict: otherwise latency-bound, with the rule explained", "[summary]") {
  Verdict v = profile::classify(handMadeProfile());
  CHECK(v.kind == Verdict::Kind::LatencyBound);
  CHECK(std::string(profile::verdictName(v.kind)) == "latency-bound");
  CHECK(contains(v.reason, ">= 90% busy"));
  CHECK(contains(v.reason, ">= 60% of memory bandwidth"));
}

TEST_CASE("summary: totals, engines, FLOPs, memory, histogram, top lists", "[summary]") {
  Program program = profiledProgram();
  std::string s = profile::summarize(program, handMadeProfile());
  INFO(s);
  CHECK(contains(s, "'forward_0' on trn2"));
  CHECK(contains(s, "not a measurement"));
  CHECK(contains(s, "total simulated time: 4 us"));
  CHECK(contains(s, "tensor"));
  CHECK(contains(s, "2.5%"));          // tensor utilisation
  CHECK(contains(s, "4.19 MFLOP"));    // 2*128^3
  CHECK(contains(s, "HFU"));
  CHECK(contains(s, "MFU"));
  CHECK(contains(s, "96 KiB moved by DMA"));
  CHECK(contains(s, "MBU"));
  CHECK(contains(s, "semaphore wait: 50 ns"));
  // The allocator's peak: the two SBUF tiles are never live together.
  // In simulated time the matmul's end and the activation's start coincide
  // (1.6 us): the bf16 tile is freed as the result tile is taken (512 B, not
  // 768).
  CHECK(contains(s, "on-chip memory (peak live, per partition): SBUF 512 B of 224 KiB (0.2%; "
                    "512 B at once in simulated time), PSUM 512 B of 16 KiB (3.1%; 512 B at "
                    "once in simulated time)"));
  CHECK(contains(s, "32K-64K:1  64K-128K:1"));
  CHECK(contains(s, "dma dma_copy"));
  CHECK(contains(s, "aten.mm.default 'mm' at model.py:12"));
  CHECK(contains(s, "busiest engine: tensor"));
  CHECK(contains(s, "verdict: latency-bound"));
}

TEST_CASE("summary: Tensor Engine idle time by the matmul it waited for", "[summary]") {
  Program program = profiledProgram();
  Profile p = handMadeProfile();
  // The matmul starts at 1.5 us (its operand's load before it) and the
  // program ends 2.4 us after it: both stretches of idle Tensor Engine.
  std::string s = profile::summarize(program, p);
  INFO(s);
  CHECK(contains(s, "Tensor Engine idle, by the matmul's source op and what it waited for"));
  CHECK(contains(s, "1.5 us   37.5%  1x aten.mm.default 'mm' at model.py:12"));
  CHECK(contains(s, "2.4 us   60.0%  1x (after the last matmul)"));
  // A second matmul of the same op right after the first: no new gap; one
  // 100 ns later: a second gap filed under the same op.
  p.trace.push_back(record(Engine::Tensor, 1, Opcode::Matmul, 1600, 1700, 0));
  p.trace.push_back(record(Engine::Tensor, 2, Opcode::Matmul, 1800, 1900, 0));
  s = profile::summarize(program, p);
  CHECK(contains(s, "1.6 us   40.0%  2x aten.mm.default 'mm' at model.py:12"));
  CHECK(contains(s, "2.1 us   52.5%  1x (after the last matmul)"));
  // No matmul, no section.
  p.trace.erase(std::remove_if(p.trace.begin(), p.trace.end(),
                               [](const InstructionRecord &r) { return r.engine == Engine::Tensor; }),
                p.trace.end());
  CHECK_FALSE(contains(profile::summarize(program, p), "Tensor Engine idle"));
}

TEST_CASE("summary: Tensor Engine idle names the instruction that released the matmul",
          "[summary]") {
  // The matmul waits for the first transfer of DMA queue 0 (the load before
  // it) and, already satisfied, nothing else: that load is what it waited for.
  Program program = profiledProgram();
  Instruction &mm = program.streams[size_t(Engine::Tensor)][0];
  mm.waits[0] = {uint8_t(kDmaQueueSemaphoreBase + 0), 1};
  std::string s = profile::summarize(program, handMadeProfile());
  INFO(s);
  CHECK(contains(s, "1x aten.mm.default 'mm' at model.py:12, waiting for dma dma_copy of "
                    "(no source: compiler-generated)"));
  // A wait on a computation of the same op says so.
  program.sources[1] = program.sources[0];
  Profile p = handMadeProfile();
  p.trace.push_back(record(Engine::Scalar, 1, Opcode::Activation, 1700, 1800, 0));
  p.trace.push_back(record(Engine::Tensor, 1, Opcode::Matmul, 1900, 2000, 0));
  Instruction second = mm;
  second.waits[0] = {uint8_t(Engine::Scalar), 2};
  program.streams[size_t(Engine::Tensor)].push_back(second);
  program.streams[size_t(Engine::Scalar)].push_back(program.streams[size_t(Engine::Scalar)][0]);
  s = profile::summarize(program, p);
  CHECK(contains(s, "1x aten.mm.default 'mm' at model.py:12, waiting for scalar activation of the same op"));
}

TEST_CASE("summary: without trace records it says how to get the breakdown", "[summary]") {
  Profile p = handMadeProfile();
  p.trace.clear();
  std::string s = profile::summarize(profiledProgram(), p);
  CHECK(contains(s, "run with trace recording on"));
  CHECK(contains(s, "SBUF 512 B of 224 KiB (0.2%), PSUM"));
  CHECK(contains(s, "verdict:"));
}

TEST_CASE("format: units and operands", "[summary]") {
  CHECK(profile::formatNs(850) == "850 ns");
  CHECK(profile::formatNs(12345) == "12.3 us");
  CHECK(profile::formatNs(6.97e6) == "6.97 ms");
  CHECK(profile::formatBytes(512) == "512 B");
  CHECK(profile::formatBytes(3.5 * 1024 * 1024) == "3.5 MiB");
  CHECK(profile::formatCount(5.5e11, "FLOP") == "550 GFLOP");
  CHECK(profile::bucketLabel(12) == "4K");
  CHECK(profile::bucketLabel(0) == "1");
  CHECK(profile::operandText(sbuf(DType::BF16, 32, 32, 64, {4, 8}, {16, 2})) ==
        "sbuf[32:64] +64 bf16 [4x8] strides(16,2)");
}
