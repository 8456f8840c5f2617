//===- TraceTest.cpp - The Chrome/Perfetto trace writer -------------------===//
//
// The trace of a hand-made profile parses as trace-event JSON, names one
// track per engine and DMA queue, and every track's slices are monotonic and
// non-overlapping (overlapping records go to extra lanes), with names and
// args (operands, waits/signal, source) on every slice; flows and counter
// tracks (HBM bandwidth, DMA in flight, SBUF/PSUM bytes live).
//
//===----------------------------------------------------------------------===//

#include "ProfileTestUtil.h"

#include "profile/ChromeTrace.h"

#include <nlohmann/json.hpp>

#include <map>
#include <set>

using namespace trnc;
using namespace trnc::test;
using json = nlohmann::json;

namespace {

json parse(const std::string &text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  REQUIRE(!j.is_discarded());
  REQUIRE(j.contains("traceEvents"));
  return j;
}

std::map<int, std::string> threadNames(const json &trace) {
  std::map<int, std::string> names;
  for (const json &e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
  return names;
}

/// Every tid's "X" slices in file order: start monotonic, no overlap.
void checkTracks(const json &trace) {
  std::map<int, double> lastEnd;
  for (const json &e : trace["traceEvents"]) {
    if (e["ph"] != "X")
      continue;
    REQUIRE(e.contains("name"));
    REQUIRE(e["dur"].get<double>() >= 0);
    int tid = e["tid"].get<int>();
    double ts = e["ts"].get<double>();
    if (lastEnd.count(tid))
      CHECK(ts >= lastEnd[tid] - 1e-9);
    lastEnd[tid] = ts + e["dur"].get<double>();
  }
}

std::vector<json> slices(const json &trace) {
  std::vector<json> v;
  for (const json &e : trace["traceEvents"])
    if (e["ph"] == "X")
      v.push_back(e);
  return v;
}

} // namespace

TEST_CASE("trace: valid JSON, one track per engine and DMA queue", "[trace]") {
  Program program = profiledProgram();
  json trace = parse(profile::writeChromeTrace(program, handMadeProfile()));
  std::map<int, std::string> names = threadNames(trace);
  CHECK(names[0] == "tensor engine");
  CHECK(names[1] == "vector engine");
  CHECK(names[2] == "scalar engine");
  CHECK(names[3] == "gpsimd engine");
  CHECK(names[profile::kDmaTrackBase + 0] == "dma queue 0");
  CHECK(names[profile::kDmaTrackBase + 3] == "dma queue 3");
  CHECK(trace["otherData"]["target"] == "trn2");
  checkTracks(trace);
}

TEST_CASE("trace: slices carry opcode, microseconds, operands, sync and source", "[trace]") {
  Program program = profiledProgram();
  std::vector<json> s = slices(parse(profile::writeChromeTrace(program, handMadeProfile())));
  REQUIRE(s.size() == 4);
  const json &mm = s[1];
  CHECK(mm["name"] == "matmul");
  CHECK(mm["tid"] == 0);
  CHECK(near(mm["ts"].get<double>(), 1.5));
  CHECK(near(mm["dur"].get<double>(), 0.1));
  CHECK(mm["args"]["dst"] == "psum[0:128] +0 f32 [128]");
  CHECK(mm["args"]["src1"] == "sbuf[0:128] +0 bf16 [128]");
  CHECK(mm["args"]["source_op"] == "aten.mm.default");
  CHECK(mm["args"]["source_node"] == "mm");
  CHECK(mm["args"]["source_loc"] == "model.py:12");
  CHECK(mm["args"]["waits"] == "s31>=1");
  CHECK(mm["args"]["signal"] == "s31");
  CHECK(near(mm["args"]["flops"].get<double>(), 2.0 * 128 * 128 * 128));
  const json &act = s[2];
  CHECK(near(act["args"]["waited_us"].get<double>(), 0.05));
  const json &out = s[3];
  CHECK(out["name"] == "dma_copy");
  CHECK(out["tid"] == profile::kDmaTrackBase + 3);
  CHECK(out["args"]["dst"] == "hbm#1 +0 f32 128x[128] pstride 128");
  CHECK(out["args"]["bytes"] == 65536);
}

TEST_CASE("trace: overlapping records on one queue go to separate lanes", "[trace]") {
  Program program = profiledProgram();
  Profile p = handMadeProfile();
  // Two transfers on queue 0 that overlap in time, and one that follows.
  p.trace.push_back(record(Engine::Dma, 0, Opcode::DmaCopy, 500, 2000, kNoSource, 0));
  p.trace.push_back(record(Engine::Dma, 0, Opcode::DmaCopy, 2000, 2500, kNoSource, 0));
  json trace = parse(profile::writeChromeTrace(program, p));
  checkTracks(trace);
  std::map<int, std::string> names = threadNames(trace);
  int lane2 = profile::kDmaTrackBase + profile::kLaneStride;
  CHECK(names[lane2] == "dma queue 0 (lane 2)");
  std::multiset<int> tids;
  for (const json &e : slices(trace))
    tids.insert(e["tid"].get<int>());
  CHECK(tids.count(profile::kDmaTrackBase) == 2);
  CHECK(tids.count(lane2) == 1);
}

TEST_CASE("trace: without records only metadata, and records out of range are safe", "[trace]") {
  Program program = profiledProgram();
  Profile p = handMadeProfile();
  p.trace.clear();
  json empty = parse(profile::writeChromeTrace(program, p, 7, "backward_0 call 1"));
  CHECK(slices(empty).empty());
  CHECK(empty["traceEvents"][0]["args"]["name"] == "backward_0 call 1");
  CHECK(empty["traceEvents"][0]["pid"] == 7);

  p.trace.push_back(record(Engine::Vector, 99, Opcode::TensorTensor, 0, 10, 12345));
  std::vector<json> s = slices(parse(profile::writeChromeTrace(program, p)));
  REQUIRE(s.size() == 1);
  CHECK(!s[0]["args"].contains("dst"));
  CHECK(!s[0]["args"].contains("source_op"));
}

TEST_CASE("trace: a flow from each semaphore wait to the instruction that signalled it",
          "[trace]") {
  Program program = profiledProgram();
  for (auto &stream : program.streams) // drop the builder's program-order chain
    for (Instruction &inst : stream) {
      inst.numWaits = 0;
      inst.signal = kNoSemaphore;
    }
  // The activation waits for the matmul's second signal of s2; the first comes
  // from the input DMA (completion order: DMA at 1500 ns, matmul at 1600 ns).
  program.streams[size_t(Engine::Dma)][0].signal = 2;
  program.streams[size_t(Engine::Tensor)][0].signal = 2;
  Instruction &act = program.streams[size_t(Engine::Scalar)][0];
  act.numWaits = 1;
  act.waits[0] = {2, 2};
  json trace = parse(profile::writeChromeTrace(program, handMadeProfile()));
  std::vector<json> starts, finishes;
  for (const json &e : trace["traceEvents"]) {
    if (e["ph"] == "s")
      starts.push_back(e);
    if (e["ph"] == "f")
      finishes.push_back(e);
  }
  REQUIRE(starts.size() == 1);
  REQUIRE(finishes.size() == 1);
  CHECK(starts[0]["id"] == finishes[0]["id"]);
  CHECK(starts[0]["name"] == "s2>=2");
  CHECK(starts[0]["tid"] == int(Engine::Tensor)); // the matmul, not the DMA
  CHECK(near(starts[0]["ts"].get<double>(), 1.5));
  CHECK(finishes[0]["tid"] == int(Engine::Scalar));
  CHECK(finishes[0]["bp"] == "e");
  CHECK(near(finishes[0]["ts"].get<double>(), 1.6));
  // A wait no signal met (a hand-made inconsistency) draws nothing.
  act.waits[0] = {2, 3};
  json none = parse(profile::writeChromeTrace(program, handMadeProfile()));
  for (const json &e : none["traceEvents"])
    CHECK(e["ph"] != "f");
}

TEST_CASE("trace: counter tracks of HBM bandwidth and DMA transfers in flight", "[trace]") {
  json trace = parse(profile::writeChromeTrace(profiledProgram(), handMadeProfile()));
  std::map<std::string, std::vector<std::pair<double, double>>> counters;
  for (const json &e : trace["traceEvents"])
    if (e["ph"] == "C")
      for (auto &[unit, value] : e["args"].items())
        counters[e["name"].get<std::string>()].push_back({e["ts"].get<double>(), value.get<double>()});
  const auto &bw = counters["HBM bandwidth (GB/s)"];
  REQUIRE(bw.size() == 4); // 0, 1.5 us (first DMA ends), 1.7 us (second starts), 4 us
  // The input DMA moves 128x128 bf16 = 32 KiB from HBM in 1500 ns.
  CHECK(near(bw[0].first, 0.0));
  CHECK(near(bw[0].second, 32768.0 / 1500));
  CHECK(near(bw[1].second, 0.0));
  CHECK(near(bw[2].second, 65536.0 / 2300));
  CHECK(near(bw[3].first, 4.0));
  CHECK(near(bw[3].second, 0.0));
  const auto &inFlight = counters["DMA transfers in flight"];
  REQUIRE(inFlight.size() == 4);
  CHECK(near(inFlight[0].second, 1));
  CHECK(near(inFlight[1].second, 0));
  CHECK(near(inFlight[2].second, 1));
}

TEST_CASE("trace: counter tracks of SBUF and PSUM bytes live", "[trace]") {
  json trace = parse(profile::writeChromeTrace(profiledProgram(), handMadeProfile()));
  std::map<std::string, std::vector<std::pair<double, double>>> counters;
  for (const json &e : trace["traceEvents"])
    if (e["ph"] == "C" && e["args"].contains("bytes"))
      counters[e["name"].get<std::string>()].push_back(
          {e["ts"].get<double>(), e["args"]["bytes"].get<double>()});
  // The bf16 tile from the input DMA's start to the matmul's end (1.6 us),
  // the result tile from the activation's start (1.6 us) to the store's end.
  const auto &sbuf = counters["SBUF live (bytes per partition, of 229376)"];
  REQUIRE(sbuf.size() == 3);
  CHECK(near(sbuf[0].first, 0.0));
  CHECK(near(sbuf[0].second, 256));
  CHECK(near(sbuf[1].first, 1.6));
  CHECK(near(sbuf[1].second, 512));
  CHECK(near(sbuf[2].first, 4.0));
  CHECK(near(sbuf[2].second, 0));
  for (const auto &[ts, bytes] : sbuf)
    CHECK(bytes <= 229376);
  const auto &psum = counters["PSUM live (bytes per partition, of 16384)"];
  REQUIRE(psum.size() == 2);
  CHECK(near(psum[0].first, 1.5));
  CHECK(near(psum[0].second, 512));
  CHECK(near(psum[1].first, 1.7));
  CHECK(near(psum[1].second, 0));

  // No table (a hand-built program): no occupancy tracks, nothing invented.
  Program bare = profiledProgram();
  bare.allocations.clear();
  json plain = parse(profile::writeChromeTrace(bare, handMadeProfile()));
  for (const json &e : plain["traceEvents"])
    CHECK(!(e["ph"] == "C" && e["args"].contains("bytes")));
}
