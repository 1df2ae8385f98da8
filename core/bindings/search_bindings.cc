// Binds the search's C++ half (core/search): fragment enumeration, the cover DP and the
// hybrid skeleton.  Programs come in as task text; parse errors raise ValueError.
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "ir/program.h"
#include "search/cover.h"
#include "search/fragments.h"

namespace nb = nanobind;

namespace drtriton {
namespace {

Program MustParse(const std::string& text) {
  Result<Program> program = Parse(text);
  if (!program) throw nb::value_error(program.error().ToString().c_str());
  return std::move(program).value();
}

nb::list NamesToPython(const std::vector<std::string>& names) {
  nb::list out;
  for (const auto& name : names) out.append(name);
  return out;
}

std::vector<search::Segment> SegmentsFromPython(const nb::list& segments) {
  std::vector<search::Segment> cover;
  for (nb::handle item : segments) {
    nb::dict d = nb::cast<nb::dict>(item);
    cover.push_back(
        {nb::cast<int>(d["start"]), nb::cast<int>(d["end"]), nb::cast<bool>(d["fused"])});
  }
  return cover;
}

}  // namespace

void BindSearch(nb::module_& m) {
  m.def(
      "fragments",
      [](const std::string& text, int max_ops, const std::vector<bool>& blocked) {
        nb::list out;
        for (const search::Fragment& f :
             search::EnumerateFragments(MustParse(text), max_ops, blocked)) {
          nb::dict d;
          d["start"] = f.start;
          d["end"] = f.end;
          d["source"] = f.program.Print();
          d["inputs"] = NamesToPython(f.inputs);
          d["outputs"] = NamesToPython(f.outputs);
          d["amplified"] = NamesToPython(f.amplified);
          d["bytes"] = f.program.bytes();
          d["unfused_bytes"] = f.program.unfused_bytes();
          out.append(d);
        }
        return out;
      },
      nb::arg("text"), nb::arg("max_ops") = 5, nb::arg("blocked") = std::vector<bool>{},
      "Contiguous fragments of at most max_ops operators as tasks, then the whole task where "
      "it is longer and has at most whole_program_max_ops: dicts {start, end, source, inputs, "
      "outputs, amplified, bytes, unfused_bytes} (amplified: outputs whose rounding a later "
      "operator magnifies); blocked[i] keeps node i out of every fragment.");
  m.attr("whole_program_max_ops") = search::kWholeProgramMaxOps;
  m.def(
      "best_cover",
      [](int n_ops, const std::map<std::pair<int, int>, double>& fragment_costs,
         const std::vector<double>& op_costs) {
        if (n_ops < 0 || op_costs.size() != static_cast<size_t>(n_ops))
          throw nb::value_error("best_cover needs one PyTorch cost per operator");
        nb::list out;
        for (const search::Segment& s : search::BestCover(n_ops, fragment_costs, op_costs)) {
          nb::dict d;
          d["start"] = s.start;
          d["end"] = s.end;
          d["fused"] = s.fused;
          out.append(d);
        }
        return out;
      },
      nb::arg("n_ops"), nb::arg("fragment_costs"), nb::arg("op_costs"),
      "Cheapest cover by fused fragments {(start, end): cost} (inf: none verified) and single "
      "PyTorch operators: list of {start, end, fused}.");
  m.def(
      "plan_hybrid",
      [](const std::string& text, const nb::list& segments) {
        const Program program = MustParse(text);
        const std::vector<search::Segment> cover = SegmentsFromPython(segments);
        nb::list out;
        for (const search::PlannedSegment& p : search::PlanHybrid(program, cover)) {
          nb::dict d;
          d["start"] = p.segment.start;
          d["end"] = p.segment.end;
          d["fused"] = p.segment.fused;
          d["inputs"] = NamesToPython(p.inputs);
          d["outputs"] = NamesToPython(p.outputs);
          d["torch_line"] = p.torch_line;
          out.append(d);
        }
        nb::dict result;
        result["segments"] = out;
        result["entry"] = search::RenderHybrid(program, cover);
        return result;
      },
      nb::arg("text"), nb::arg("segments"),
      "The hybrid's skeleton: {segments: [{start, end, fused, inputs, outputs, torch_line}], "
      "entry: text of triton_fused_operator calling fragment_<k> for the k-th fused segment}.");
}

}  // namespace drtriton
