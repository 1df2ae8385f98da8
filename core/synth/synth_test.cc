// Synthesizer tests: presets and bounds, validity of sampled programs (through the IR),
// determinism across thread counts, operator coverage, and impossible bounds.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include "ir/build.h"
#include "ir/program.h"
#include "synth/synthesizer.h"

namespace drtriton::synth {
namespace {

SynthBounds Tiny() { return Preset("tiny").value(); }
SynthBounds Paper() { return Preset("paper").value(); }

TEST(BoundsTest, PresetsValidate) {
  EXPECT_TRUE(Paper().Validate().ok());
  EXPECT_TRUE(Tiny().Validate().ok());
  EXPECT_FALSE(Preset("huge").ok());
}

TEST(BoundsTest, ImpossibleBoundsSayWhy) {
  SynthBounds b = Paper();
  ASSERT_TRUE(b.Set("dim_max", 0).ok());
  auto r = b.Validate();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("dim_max"), std::string::npos);
  b = Paper();
  ASSERT_TRUE(b.Set("flops_min", 1e12).ok());
  ASSERT_TRUE(b.Set("flops_max", 1e11).ok());
  EXPECT_FALSE(b.Validate().ok());
  EXPECT_FALSE(b.Set("no_such_bound", 1).ok());
  EXPECT_FALSE(b.Set("dim_max", 1.5).ok());
}

#ifdef DRTRITON_HAVE_GECODE

TEST(SynthTest, SampledProgramsAreValidAndRoundTrip) {
  for (const SynthBounds& bounds : {Tiny(), Paper()}) {
    for (int level = 1; level <= 6; ++level) {
      for (uint64_t seed = 0; seed < 20; ++seed) {
        auto program = SampleProgram(level, SampleSeed(7, seed), bounds);
        ASSERT_TRUE(program.ok()) << program.error().message;
        const Program& p = program.value();
        EXPECT_EQ(p.level(), level);
        EXPECT_GE(p.flops(), bounds.flops_min);
        EXPECT_LE(p.flops(), bounds.flops_max);
        auto reparsed = Parse(p.Print());
        ASSERT_TRUE(reparsed.ok()) << reparsed.error().ToString() << "\n" << p.Print();
        EXPECT_EQ(reparsed.value().Print(), p.Print());
      }
    }
  }
}

TEST(SynthTest, SameSeedSameProgram) {
  auto a = SampleProgram(4, 1234, Paper());
  auto b = SampleProgram(4, 1234, Paper());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value().Print(), b.value().Print());
}

std::vector<std::string> RunSynth(int threads, int64_t n, std::vector<int> levels, SynthBounds b) {
  SynthConfig config;
  config.bounds = b;
  config.levels = std::move(levels);
  config.seed = 42;
  config.threads = threads;
  Synthesizer synth(config);
  std::vector<std::string> sources;
  // Two calls, to check that chunking does not change the sequence either.
  for (int64_t chunk : {n / 3, n - n / 3}) {
    auto records = synth.Next(chunk);
    EXPECT_TRUE(records.ok()) << records.error().message;
    for (const auto& r : records.value()) sources.push_back(r.source);
  }
  return sources;
}

TEST(SynthTest, DeterministicWhateverTheThreadCount) {
  const auto one = RunSynth(1, 60, {1, 2, 3}, Paper());
  EXPECT_EQ(RunSynth(3, 60, {1, 2, 3}, Paper()), one);
  EXPECT_EQ(std::set<std::string>(one.begin(), one.end()).size(), one.size()) << "duplicates";
}

TEST(SynthTest, ResumeContinuesTheSameSequence) {
  SynthConfig config;
  config.bounds = Tiny();
  config.levels = {1, 2};
  config.seed = 5;
  Synthesizer whole(config);
  auto all = whole.Next(40).value();
  Synthesizer first(config);
  auto head = first.Next(15).value();
  Synthesizer rest(config);
  rest.ResumeAt(head.back().index + 1);
  for (const auto& r : head) rest.MarkSeen(r.key);
  auto tail = rest.Next(25).value();
  head.insert(head.end(), tail.begin(), tail.end());
  ASSERT_EQ(head.size(), all.size());
  for (size_t k = 0; k < all.size(); ++k) EXPECT_EQ(head[k].source, all[k].source);
}

TEST(SynthTest, EveryComputeOperatorIsReachable) {
  SynthConfig config;
  config.bounds = Tiny();
  config.levels = {1, 2, 3};
  config.seed = 1;
  config.threads = 2;
  Synthesizer synth(config);
  ASSERT_TRUE(synth.Next(3000).ok());
  for (OpId id : SynthOps()) {
    EXPECT_GT(synth.stats().ops[static_cast<size_t>(id)].emitted, 0) << GetOp(id).name;
  }
}

TEST(SynthTest, ImpossibleBoundsFailFast) {
  SynthBounds b = Paper();
  b.flops_min = 1e30;  // valid on its own, unreachable by any program
  b.flops_max = 2e30;
  b.max_attempts = 20;
  const auto start = std::chrono::steady_clock::now();
  auto program = SampleProgram(2, 99, b);
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.error().message.find("too tight"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

#endif  // DRTRITON_HAVE_GECODE

}  // namespace
}  // namespace drtriton::synth
