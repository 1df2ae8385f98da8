// The CSP-DAG synthesizer: programs of a given difficulty (number of compute operators),
// sampled structurally (synth/dag.h), shaped by a constraint solver (synth/shape_model.h),
// built and re-checked through the IR, deduplicated by canonical form.
//
// Determinism: sample `i` of a run draws only from SampleSeed(seed, i) and has level
// levels[i % levels.size()]; samples are merged in index order, so the output (and the
// statistics) are the same for every thread count, and a run can resume at any index.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/program.h"
#include "synth/bounds.h"
#include "synth/dag.h"
#include "util/result.h"

namespace drtriton::synth {

// True when this build has the constraint solver (Gecode); without it every entry point
// below returns an error.
bool Available();

struct SynthConfig {
  SynthBounds bounds;
  std::vector<int> levels = {1};
  uint64_t seed = 0;
  int threads = 1;
  Result<bool> Validate() const;
};

struct SynthRecord {
  int64_t index = 0;   // position in the run's sample sequence
  uint64_t seed = 0;   // SampleSeed(run seed, index): regenerates this program alone
  int level = 0;
  std::vector<std::string> ops;
  std::string source;  // the functional task text
  double flops = 0;
  double bytes = 0;
  std::string key;     // CanonicalKey, for deduplication
};

struct SynthStats {
  std::vector<OpCounters> ops;  // by OpId
  int64_t samples = 0;     // indices consumed
  int64_t kept = 0;
  int64_t duplicates = 0;
  int64_t dead_ends = 0;       // a step where no operator fit; the DAG restarts
  int64_t solve_failures = 0;  // the solver found no shapes within its fail limit
  int64_t check_failures = 0;  // the IR or the exact 64-bit bound check refused the result
  std::map<std::string, int64_t> check_errors;  // first words of each refusal, counted
  std::map<int, int64_t> kept_per_level;
  void Merge(const SynthStats& other);
};

// One program of `level` compute operators from `sample_seed` (no deduplication).
Result<Program> SampleProgram(int level, uint64_t sample_seed, const SynthBounds& bounds,
                              SynthStats* stats = nullptr);

class Synthesizer {
 public:
  explicit Synthesizer(SynthConfig config);

  // The next `count` programs not seen before, in index order.  Fails (with the first
  // error in index order) when the bounds admit no program.
  Result<std::vector<SynthRecord>> Next(int64_t count);

  // Samples [first, first + count) without deduplication, in index order: one record per
  // index (key included), stats of those samples added to `stats`.  The building block
  // of multi-process runs (drtriton/synth/): Gecode serializes space allocation behind a
  // process-wide lock, so threads stop scaling past a few cores while processes do not.
  Result<std::vector<SynthRecord>> SampleBlock(int64_t first, int64_t count, SynthStats* stats);

  // Resuming: continue from `index`, treating `keys` as already emitted.
  void ResumeAt(int64_t index) { next_index_ = index; }
  void MarkSeen(const std::string& key) { seen_.insert(key); }

  int64_t next_index() const { return next_index_; }
  const SynthStats& stats() const { return stats_; }
  const SynthConfig& config() const { return config_; }

 private:
  struct Slot {
    std::optional<Result<Program>> program;
    SynthStats stats;
    SynthRecord record;
  };
  // Samples [first, first + n) on config_.threads threads.
  std::vector<Slot> Fill(int64_t first, int64_t n) const;

  SynthConfig config_;
  int64_t next_index_ = 0;
  std::unordered_set<std::string> seen_;
  int64_t duplicate_run_ = 0;
  SynthStats stats_;
};

// The level of sample `index` and its seed.
int LevelOf(const SynthConfig& config, int64_t index);

}  // namespace drtriton::synth
