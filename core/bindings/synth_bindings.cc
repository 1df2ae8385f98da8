// Binds the CSP-DAG synthesizer.  Records and statistics come back as plain dicts; the
// Python layer (drtriton/synth/) adds the progress bar, files and argument checking.
#include <memory>
#include <string>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "catalog/catalog.h"
#include "ir/build.h"
#include "ir/program.h"
#include "synth/synthesizer.h"

namespace nb = nanobind;

namespace drtriton {
namespace {

using synth::SynthBounds;
using synth::SynthConfig;
using synth::Synthesizer;

[[noreturn]] void Raise(const Error& error) { throw nb::value_error(error.ToString().c_str()); }

nb::dict BoundsToDict(const SynthBounds& bounds) {
  nb::dict d;
  for (const auto& name : SynthBounds::FieldNames()) {
    const double v = bounds.Get(name);
    // Integer-valued bounds come back as ints so that they print and round-trip cleanly.
    if (name.find("elem") == std::string::npos && name.find("flops") == std::string::npos)
      d[name.c_str()] = static_cast<int64_t>(v);
    else
      d[name.c_str()] = v;
  }
  return d;
}

SynthBounds MakeBounds(const std::string& preset, const nb::dict& overrides) {
  auto bounds = synth::Preset(preset);
  if (!bounds) Raise(bounds.error());
  SynthBounds b = bounds.value();
  for (auto [key, value] : overrides) {
    const std::string name = nb::cast<std::string>(nb::str(key));
    auto ok = b.Set(name, nb::cast<double>(value));
    if (!ok) Raise(ok.error());
  }
  if (auto ok = b.Validate(); !ok) Raise(ok.error());
  return b;
}

nb::dict RecordToDict(const synth::SynthRecord& r) {
  nb::dict d;
  d["index"] = r.index;
  d["seed"] = r.seed;
  d["level"] = r.level;
  d["ops"] = r.ops;
  d["source"] = r.source;
  d["flops"] = r.flops;
  d["bytes"] = r.bytes;
  return d;
}

nb::dict StatsToDict(const synth::SynthStats& s) {
  nb::dict d;
  d["samples"] = s.samples;
  d["kept"] = s.kept;
  d["duplicates"] = s.duplicates;
  d["dead_ends"] = s.dead_ends;
  d["solve_failures"] = s.solve_failures;
  d["check_failures"] = s.check_failures;
  nb::dict errors, levels, ops;
  for (const auto& [k, v] : s.check_errors) errors[k.c_str()] = v;
  for (const auto& [k, v] : s.kept_per_level) levels[nb::int_(k)] = v;
  for (OpId id : synth::SynthOps()) {
    if (static_cast<size_t>(id) >= s.ops.size()) break;
    const synth::OpCounters& c = s.ops[static_cast<size_t>(id)];
    nb::dict op, rejected;
    op["tried"] = c.tried;
    op["emitted"] = c.emitted;
    for (int r = 1; r < static_cast<int>(synth::Reject::kCount); ++r)
      if (c.rejected[r] > 0) rejected[synth::RejectName(static_cast<synth::Reject>(r))] = c.rejected[r];
    op["rejected"] = rejected;
    ops[GetOp(id).name.c_str()] = op;
  }
  d["check_errors"] = errors;
  d["kept_per_level"] = levels;
  d["ops"] = ops;
  return d;
}

}  // namespace

void BindSynth(nb::module_& m) {
  m.def("synth_available", &synth::Available,
        "True when this build has the constraint solver (Gecode) the synthesizer needs.");
  m.def("synth_bound_names", [] { return SynthBounds::FieldNames(); });
  m.def("synth_presets", [] { return synth::PresetNames(); });
  m.def(
      "synth_bounds",
      [](const std::string& preset, const nb::dict& overrides) {
        return BoundsToDict(MakeBounds(preset, overrides));
      },
      nb::arg("preset"), nb::arg("overrides") = nb::dict(),
      "The bounds of `preset` with `overrides` applied; ValueError when impossible.");

  m.def(
      "synth_sample",
      [](int level, uint64_t seed, const std::string& preset, const nb::dict& overrides) {
        const SynthBounds bounds = MakeBounds(preset, overrides);
        Result<Program> program = MakeError("");
        {
          nb::gil_scoped_release release;
          program = synth::SampleProgram(level, seed, bounds);
        }
        if (!program) Raise(program.error());
        return program.value().Print();
      },
      nb::arg("level"), nb::arg("seed"), nb::arg("preset") = "paper",
      nb::arg("overrides") = nb::dict(),
      "The source of the program a record with this level and seed holds (no dedup).");

  nb::class_<Synthesizer>(m, "Synthesizer")
      .def(
          "__init__",
          [](Synthesizer* self, std::vector<int> levels, uint64_t seed, int threads,
             const std::string& preset, const nb::dict& overrides) {
            SynthConfig config;
            config.bounds = MakeBounds(preset, overrides);
            config.levels = std::move(levels);
            config.seed = seed;
            config.threads = threads;
            if (auto ok = config.Validate(); !ok) Raise(ok.error());
            new (self) Synthesizer(std::move(config));
          },
          nb::arg("levels"), nb::arg("seed") = 0, nb::arg("threads") = 1,
          nb::arg("preset") = "paper", nb::arg("overrides") = nb::dict())
      .def(
          "next",
          [](Synthesizer& self, int64_t count) {
            Result<std::vector<synth::SynthRecord>> records = std::vector<synth::SynthRecord>{};
            {
              nb::gil_scoped_release release;
              records = self.Next(count);
            }
            if (!records) Raise(records.error());
            nb::list out;
            for (const auto& r : records.value()) out.append(RecordToDict(r));
            return out;
          },
          nb::arg("count"), "The next `count` distinct programs, as record dicts.")
      .def(
          "sample_block",
          [](Synthesizer& self, int64_t first, int64_t count) {
            Result<std::vector<synth::SynthRecord>> records = std::vector<synth::SynthRecord>{};
            synth::SynthStats stats;
            {
              nb::gil_scoped_release release;
              records = self.SampleBlock(first, count, &stats);
            }
            if (!records) Raise(records.error());
            nb::list out;
            for (const auto& r : records.value()) {
              nb::dict d = RecordToDict(r);
              d["key"] = r.key;
              out.append(d);
            }
            return nb::make_tuple(out, StatsToDict(stats));
          },
          nb::arg("first"), nb::arg("count"),
          "Samples first .. first + count - 1 without deduplication: (records with their "
          "canonical key, stats of these samples).")
      .def("resume_at", &Synthesizer::ResumeAt, nb::arg("index"),
           "Continue from sample `index` (the index after the last record kept).")
      .def(
          "mark_seen",
          [](Synthesizer& self, const std::vector<std::string>& sources) {
            for (const auto& source : sources) {
              auto program = Parse(source);
              if (!program) Raise(program.error());
              self.MarkSeen(CanonicalKey(program.value()));
            }
          },
          nb::arg("sources"), "Treat these programs as already emitted (resuming).")
      .def_prop_ro("next_index", &Synthesizer::next_index)
      .def_prop_ro("bounds", [](const Synthesizer& self) { return BoundsToDict(self.config().bounds); })
      .def("stats", [](const Synthesizer& self) { return StatsToDict(self.stats()); });
}

}  // namespace drtriton
