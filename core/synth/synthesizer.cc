#include "synth/synthesizer.h"

#include <algorithm>
#include <cctype>
#include <cfenv>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "ir/build.h"
#include "synth/rng.h"
#include "synth/shape_model.h"

namespace drtriton::synth {

#ifdef DRTRITON_HAVE_GECODE
bool Available() { return true; }
#else
bool Available() { return false; }
#endif

namespace {

constexpr int kMaxLevel = 64;
// Consecutive duplicates before a run is declared exhausted (a tiny space, many programs).
constexpr int64_t kMaxDuplicateRun = 20000;

void Count(SynthStats* stats, int64_t SynthStats::*field) {
  if (stats) ++(stats->*field);
}

void Resize(SynthStats& stats) {
  if (stats.ops.size() < Catalog().size()) stats.ops.resize(Catalog().size());
}

#ifdef DRTRITON_HAVE_GECODE

// Gecode's float propagators switch the FPU rounding mode (interval arithmetic) and leave
// it switched; everything after the solver (FLOPs, float literals, the caller's thread)
// needs round-to-nearest back.
class RoundingGuard {
 public:
  RoundingGuard() : mode_(std::fegetround()) {}
  ~RoundingGuard() { Restore(); }
  void Restore() const { std::fesetround(mode_); }

 private:
  int mode_;
};

// Every operator of a DAG that failed after sampling shares the blame in the statistics.
void Blame(SynthStats& s, const Dag& dag, Reject why) {
  for (const DagNode& n : dag.nodes) ++s.ops[static_cast<size_t>(n.op)].rejected[static_cast<int>(why)];
}

// The attribute as printed: var-backed attributes read their solved values.
AttrValue ReadAttr(const DagAttr& attr, const std::vector<int64_t>& values) {
  if (attr.vars.empty()) return attr.value;
  std::vector<int64_t> ints;
  for (VarId v : attr.vars) ints.push_back(values[static_cast<size_t>(v)]);
  const bool same = std::all_of(ints.begin(), ints.end(), [&](int64_t x) { return x == ints[0]; });
  if (!attr.always_list && same) return AttrValue::Int(ints[0]);
  return AttrValue::IntList(std::move(ints));
}

// Builds the program through the IR, which re-checks every shape and attribute.
Result<Program> BuildProgram(const Dag& dag, const std::vector<int64_t>& values) {
  Program program;
  std::vector<ValueId> ids(dag.tensors.size());
  int inputs = 0;
  for (size_t t = 0; t < dag.tensors.size(); ++t) {
    const DagTensor& tensor = dag.tensors[t];
    if (tensor.producer >= 0) continue;
    Shape shape;
    for (VarId v : tensor.dims) shape.push_back(values[static_cast<size_t>(v)]);
    auto id = program.AddInput("x" + std::to_string(inputs++), std::move(shape), tensor.create_op);
    if (!id) return id.error();
    ids[t] = id.value();
  }
  for (size_t k = 0; k < dag.nodes.size(); ++k) {
    const DagNode& node = dag.nodes[k];
    std::vector<ValueId> tensors;
    for (int t : node.tensors) tensors.push_back(t < 0 ? ValueId{} : ids[static_cast<size_t>(t)]);
    std::vector<AttrValue> attrs;
    for (const DagAttr& a : node.attrs) attrs.push_back(ReadAttr(a, values));
    auto id = program.AddNode(node.op, std::move(tensors), std::move(attrs), "t" + std::to_string(k));
    if (!id) return id.error();
    ids[static_cast<size_t>(node.output)] = id.value();
  }
  program.SetOutputs({ids[static_cast<size_t>(dag.frontier())]});
  return program;
}

// The bounds, checked exactly: dims and element counts in 64-bit integers, FLOPs as the
// IR computes them.  Broadcast and keepdim dims of size 1 are allowed below dim_min.
std::optional<std::string> CheckBounds(const Program& program, const SynthBounds& b) {
  for (const Value& v : program.values()) {
    int64_t elements = 1;
    for (int64_t d : v.shape) {
      if (d > b.dim_max || (d < b.dim_min && d != 1)) return "dim out of bounds";
      if (__builtin_mul_overflow(elements, d, &elements)) return "element count overflows";
    }
    const auto count = static_cast<double>(elements);
    if (count > b.elem_max) return "too many elements";
    if (v.producer.valid() && count < b.elem_min) return "too few elements";
  }
  const double flops = program.flops();
  if (flops < b.flops_min || flops > b.flops_max) return "flops outside the window";
  return std::nullopt;
}

// The refusal with its numbers blanked, so that refusals of one kind count together:
// "conv2d: kernel larger than the padded input", "avg_pool2d: padding [N, N] must be ...".
std::string Generalize(const std::string& message) {
  std::string out;
  for (char ch : message) {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      if (out.empty() || out.back() != '#') out += '#';
    } else {
      out += ch;
    }
  }
  return out.substr(0, 120);
}

#endif  // DRTRITON_HAVE_GECODE

}  // namespace

void SynthStats::Merge(const SynthStats& other) {
  Resize(*this);
  for (size_t k = 0; k < other.ops.size(); ++k) {
    OpCounters& a = ops[k];
    const OpCounters& b = other.ops[k];
    a.tried += b.tried;
    a.emitted += b.emitted;
    for (int r = 0; r < static_cast<int>(Reject::kCount); ++r) a.rejected[r] += b.rejected[r];
  }
  samples += other.samples;
  kept += other.kept;
  duplicates += other.duplicates;
  dead_ends += other.dead_ends;
  solve_failures += other.solve_failures;
  check_failures += other.check_failures;
  for (const auto& [k, v] : other.check_errors) check_errors[k] += v;
  for (const auto& [k, v] : other.kept_per_level) kept_per_level[k] += v;
}

Result<bool> SynthConfig::Validate() const {
  if (auto ok = bounds.Validate(); !ok) return ok.error();
  if (levels.empty()) return MakeError("no levels given");
  for (int level : levels)
    if (level < 1 || level > kMaxLevel)
      return MakeError("level " + std::to_string(level) + " outside [1, " +
                       std::to_string(kMaxLevel) + "]");
  if (threads < 1) return MakeError("threads must be >= 1");
  if (!Available())
    return MakeError("this build of drtriton has no constraint solver (built without Gecode)");
  return true;
}

int LevelOf(const SynthConfig& config, int64_t index) {
  return config.levels[static_cast<size_t>(index % static_cast<int64_t>(config.levels.size()))];
}

Result<Program> SampleProgram(int level, uint64_t sample_seed, const SynthBounds& bounds,
                              SynthStats* stats) {
#ifdef DRTRITON_HAVE_GECODE
  SynthStats local;
  SynthStats& s = stats ? *stats : local;
  Resize(s);
  Rng rng(sample_seed);
  const RoundingGuard rounding;
  for (int64_t attempt = 0; attempt < bounds.max_attempts; ++attempt) {
    rounding.Restore();
    ShapeModel model(bounds, &rng);
    Dag dag;
    if (!SampleDag(level, bounds, rng, model, dag, s.ops)) {
      Count(&s, &SynthStats::dead_ends);
      continue;
    }
    const std::optional<std::vector<int64_t>> values = model.Solve();
    rounding.Restore();
    if (!values) {
      Count(&s, &SynthStats::solve_failures);
      Blame(s, dag, Reject::kUnsolved);
      continue;
    }
    Result<Program> program = BuildProgram(dag, *values);
    std::optional<std::string> why;
    if (!program) why = Generalize(program.error().message);
    else why = CheckBounds(program.value(), bounds);
    if (why) {
      Count(&s, &SynthStats::check_failures);
      Blame(s, dag, Reject::kRefused);
      ++s.check_errors[*why];
      continue;
    }
    return program;
  }
  return MakeError("no program of level " + std::to_string(level) + " found in " +
                   std::to_string(bounds.max_attempts) +
                   " attempts: the bounds are too tight (" + bounds.ToString() + ")");
#else
  (void)level;
  (void)sample_seed;
  (void)bounds;
  (void)stats;
  return MakeError("this build of drtriton has no constraint solver (built without Gecode)");
#endif
}

Synthesizer::Synthesizer(SynthConfig config) : config_(std::move(config)) { Resize(stats_); }

// Everything per sample, including printing and the canonical key, runs in the workers;
// the merge in Next() only deduplicates (serial work there capped scaling at ~3 threads).
std::vector<Synthesizer::Slot> Synthesizer::Fill(int64_t first, int64_t n) const {
  std::vector<Slot> slots(static_cast<size_t>(n));
  auto work = [&](int worker) {
    for (int64_t k = worker; k < n; k += config_.threads) {
      Slot& slot = slots[static_cast<size_t>(k)];
      const int64_t index = first + k;
      const uint64_t seed = SampleSeed(config_.seed, static_cast<uint64_t>(index));
      slot.program = SampleProgram(LevelOf(config_, index), seed, config_.bounds, &slot.stats);
      if (!slot.program->ok()) continue;
      const Program& program = slot.program->value();
      SynthRecord& r = slot.record;
      r.index = index;
      r.seed = seed;
      r.level = program.level();
      r.ops = program.op_names();
      r.source = program.Print();
      r.flops = program.flops();
      r.bytes = program.bytes();
      r.key = CanonicalKey(program);
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < config_.threads; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& t : pool) t.join();
  return slots;
}

Result<std::vector<SynthRecord>> Synthesizer::SampleBlock(int64_t first, int64_t count,
                                                          SynthStats* stats) {
  if (auto ok = config_.Validate(); !ok) return ok.error();
  std::vector<Slot> slots = Fill(first, count);
  std::vector<SynthRecord> records;
  for (Slot& slot : slots) {
    if (!slot.program->ok()) return slot.program->error();
    if (stats) {
      Resize(*stats);
      stats->Merge(slot.stats);
      ++stats->samples;
    }
    records.push_back(std::move(slot.record));
  }
  return records;
}

Result<std::vector<SynthRecord>> Synthesizer::Next(int64_t count) {
  if (auto ok = config_.Validate(); !ok) return ok.error();
  std::vector<SynthRecord> records;
  while (static_cast<int64_t>(records.size()) < count) {
    // A batch a little larger than what is missing, to cover duplicates; whatever is
    // left unmerged is recomputed by the next call (samples are pure functions of index).
    const int64_t missing = count - static_cast<int64_t>(records.size());
    const int64_t batch = missing + missing / 16 + config_.threads;
    const int64_t first = next_index_;
    std::vector<Slot> slots = Fill(first, batch);

    for (int64_t k = 0; k < batch && static_cast<int64_t>(records.size()) < count; ++k) {
      Slot& slot = slots[static_cast<size_t>(k)];
      const int64_t index = first + k;
      if (!slot.program->ok()) return slot.program->error();
      stats_.Merge(slot.stats);
      ++stats_.samples;
      next_index_ = index + 1;
      const Program& program = slot.program->value();
      if (!seen_.insert(slot.record.key).second) {
        ++stats_.duplicates;
        if (++duplicate_run_ > kMaxDuplicateRun) {
          return MakeError("only " + std::to_string(seen_.size()) +
                           " distinct programs after " + std::to_string(duplicate_run_) +
                           " duplicates in a row: these bounds and levels admit few programs; "
                           "widen the bounds, add levels or ask for fewer");
        }
        continue;
      }
      duplicate_run_ = 0;
      SynthRecord& r = slot.record;
      ++stats_.kept;
      ++stats_.kept_per_level[r.level];
      for (const Node& node : program.nodes()) ++stats_.ops[static_cast<size_t>(node.op)].emitted;
      records.push_back(std::move(r));
    }
  }
  return records;
}

}  // namespace drtriton::synth
