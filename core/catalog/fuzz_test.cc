// Shape inference on random arguments: any shapes, any attribute values and types, missing
// or extra arguments.  It must return a value or an error, never crash (the test build runs
// under ASan and UBSan), and what it accepts must have consistent FLOPs and bytes.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <vector>

#include "catalog/catalog.h"

namespace drtriton {
namespace {

class ArgFuzzer {
 public:
  explicit ArgFuzzer(uint32_t seed) : rng_(seed) {}

  Shape RandomShape(size_t max_rank) {
    Shape s(Pick(0, static_cast<int64_t>(max_rank)));
    for (auto& d : s) d = Pick(0, 9) == 0 ? Pick(-3, 0) : Pick(1, 9);
    return s;
  }

  AttrValue RandomAttr() {
    switch (Pick(0, 6)) {
      case 0:
        return AttrValue::None();
      case 1:
        return AttrValue::Bool(Pick(0, 1) == 1);
      case 2:
        return AttrValue::Int(Pick(-4, 6));
      case 3:
        return AttrValue::Float(static_cast<double>(Pick(-20, 20)) / 4);
      case 4:
        return AttrValue::String(Pick(0, 1) ? "tanh" : "none");
      case 5:
        return AttrValue::Int(Pick(0, 1) ? (int64_t{1} << 62) : -(int64_t{1} << 62));
      default: {
        std::vector<int64_t> v(static_cast<size_t>(Pick(0, 4)));
        for (auto& x : v) x = Pick(-1, 4);
        return AttrValue::IntList(v);
      }
    }
  }

  // Mostly the example with one or two things changed, sometimes anything at all.
  OpArgs Mutate(const OpInfo& op) {
    OpArgs args;
    for (const Shape& s : op.example.inputs) args.tensors.emplace_back(s);
    args.attrs = op.example.attrs;
    const int64_t edits = Pick(1, 3);
    for (int64_t e = 0; e < edits; ++e) Edit(args);
    return args;
  }

 private:
  void Edit(OpArgs& args) {
    switch (Pick(0, 5)) {
      case 0:
        if (!args.tensors.empty()) Element(args.tensors) = RandomShape(6);
        break;
      case 1:
        if (!args.tensors.empty()) Element(args.tensors) = std::nullopt;
        break;
      case 2:
        if (!args.attrs.empty()) Element(args.attrs) = RandomAttr();
        break;
      case 3:
        args.attrs.push_back(RandomAttr());
        break;
      case 4:
        if (!args.tensors.empty()) args.tensors.pop_back();
        break;
      default: {
        if (args.tensors.empty()) break;
        std::optional<Shape>& t = Element(args.tensors);
        if (t)
          for (auto& d : *t) d = Pick(1, 4);
      }
    }
  }

  template <class T>
  T& Element(std::vector<T>& v) {
    return v[static_cast<size_t>(Pick(0, static_cast<int64_t>(v.size()) - 1))];
  }
  int64_t Pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  std::mt19937 rng_;
};

TEST(CatalogFuzzTest, RandomArgumentsGiveShapesOrErrors) {
  ArgFuzzer fuzz(12345);
  int accepted = 0, rejected = 0;
  for (int round = 0; round < 300; ++round) {
    for (const OpInfo& op : Catalog()) {
      const OpArgs args = fuzz.Mutate(op);
      auto out = InferShape(op, args);
      if (!out) {
        ++rejected;
        EXPECT_EQ(out.error().message.rfind(op.name + ": ", 0), 0u) << out.error().message;
        continue;
      }
      ++accepted;
      for (int64_t d : out.value()) EXPECT_GE(d, 1) << op.name;
      EXPECT_GE(CountFlops(op, args, out.value()), 0.0) << op.name;
      EXPECT_GT(CountBytes(op, args, out.value()), 0.0) << op.name;
    }
  }
  // Both paths are exercised.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace drtriton
