// Shape rules: hand-computed shapes, and errors that name the operator and the problem.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"

namespace drtriton {
namespace {

using Tensors = std::vector<std::optional<Shape>>;

AttrValue I(int64_t v) { return AttrValue::Int(v); }
AttrValue F(double v) { return AttrValue::Float(v); }
AttrValue B(bool v) { return AttrValue::Bool(v); }
AttrValue L(std::vector<int64_t> v) { return AttrValue::IntList(std::move(v)); }
AttrValue None() { return AttrValue::None(); }

Result<Shape> Infer(const char* op, Tensors tensors, std::vector<AttrValue> attrs = {}) {
  const OpId id = FindOp(op);
  EXPECT_NE(id, kInvalidOp) << op;
  return InferShape(GetOp(id), OpArgs{std::move(tensors), std::move(attrs)});
}

void ExpectShape(const Result<Shape>& r, const Shape& want) {
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r.value(), want);
}

// The error names the operator and contains `part`.
void ExpectError(const Result<Shape>& r, const std::string& op, const std::string& part) {
  ASSERT_FALSE(r.ok()) << op << " unexpectedly inferred a shape";
  EXPECT_EQ(r.error().message.rfind(op + ": ", 0), 0u) << r.error().message;
  EXPECT_NE(r.error().message.find(part), std::string::npos) << r.error().message;
}

TEST(ShapeRulesTest, Broadcast) {
  ExpectShape(Infer("add", {Shape{2, 3, 4}, Shape{3, 1}}), {2, 3, 4});
  ExpectShape(Infer("mul", {Shape{5}, Shape{3, 4, 5}}), {3, 4, 5});  // paper, appendix B
  ExpectShape(Infer("relu", {Shape{2, 3}}), {2, 3});
  ExpectShape(Infer("pow", {Shape{2, 3}}, {F(2.0)}), {2, 3});
  ExpectError(Infer("add", {Shape{4, 8}, Shape{3, 8}}), "add", "do not broadcast");
  ExpectError(Infer("add", {Shape{4, 8}, Shape{3, 8}}), "add", "(4, 8)");  // shapes named
  // Rank 6, as the layout operators (rank-6 views of real models), and no further.
  ExpectShape(Infer("mul", {Shape{2, 2, 8, 1, 16, 4}, Shape{2, 2, 8, 1, 1, 4}}),
              {2, 2, 8, 1, 16, 4});
  ExpectError(Infer("relu", {Shape{1, 2, 1, 2, 1, 2, 1}}), "relu", "rank");
}

TEST(ShapeRulesTest, ClassLoss) {
  const AttrValue mean = AttrValue::String("mean"), none = AttrValue::String("none");
  ExpectShape(Infer("nll_loss", {Shape{8, 10}, Shape{8}}, {I(-100), mean}), {});
  ExpectShape(Infer("F.nll_loss", {Shape{8, 10}, Shape{8}}, {I(-100), AttrValue::String("sum")}),
              {});
  ExpectShape(Infer("nll_loss", {Shape{8, 10}, Shape{8}}, {I(-100), none}), {8});
  ExpectError(Infer("nll_loss", {Shape{8, 10}, Shape{7}}, {I(-100), mean}), "nll_loss",
              "target must have shape (8,)");
  ExpectError(Infer("nll_loss", {Shape{8, 10}, Shape{8, 1}}, {I(-100), mean}), "nll_loss",
              "one class a row");
  ExpectError(Infer("nll_loss", {Shape{8, 10, 3}, Shape{8}}, {I(-100), mean}), "nll_loss",
              "rank");
  ExpectError(Infer("nll_loss", {Shape{8, 10}, Shape{8}}, {I(-100), AttrValue::String("max")}),
              "nll_loss", "reduction");
}

// An embedding: a row of the (rows, D) weight per int64 index, any index shape.
TEST(ShapeRulesTest, Embedding) {
  ExpectShape(Infer("embedding", {Shape{4, 7}, Shape{10, 3}}, {}), {4, 7, 3});
  ExpectShape(Infer("F.embedding", {Shape{5}, Shape{10, 3}}, {}), {5, 3});
  ExpectError(Infer("embedding", {Shape{5}, Shape{10, 3, 2}}, {}), "embedding",
              "weight must be 2-d");
}

TEST(ShapeRulesTest, Layout) {
  ExpectShape(Infer("reshape", {Shape{2, 3, 4}}, {L({-1, 4})}), {6, 4});
  ExpectShape(Infer("reshape", {Shape{2, 3}}, {L({2, 1, 3})}), {2, 1, 3});
  ExpectError(Infer("reshape", {Shape{2, 3}}, {L({4, -1})}), "reshape", "does not divide");
  ExpectError(Infer("reshape", {Shape{2, 3}}, {L({-1, -1})}), "reshape", "second -1");
  ExpectError(Infer("reshape", {Shape{2, 3}}, {L({7})}), "reshape", "another size");
  // One element to and from its 0-d view (a reduction over every dim, then arithmetic).
  ExpectShape(Infer("reshape", {Shape{}}, {L({1})}), {1});
  ExpectShape(Infer("reshape", {Shape{1, 1}}, {L({})}), {});
  ExpectError(Infer("reshape", {Shape{2}}, {L({})}), "reshape", "another size");
  ExpectShape(Infer("permute", {Shape{2, 3, 4}}, {L({-1, 0, 1})}), {4, 2, 3});
  ExpectError(Infer("permute", {Shape{2, 3, 4}}, {L({0, 0, 1})}), "permute", "repeat");
  ExpectError(Infer("permute", {Shape{2, 3, 4}}, {L({1, 0})}), "permute", "each of the 3");
  ExpectShape(Infer("narrow", {Shape{2, 6}}, {I(1), I(-4), I(4)}), {2, 4});
  ExpectError(Infer("narrow", {Shape{2, 6}}, {I(1), I(3), I(4)}), "narrow", "past the dim");
  ExpectError(Infer("narrow", {Shape{2, 6}}, {I(1), I(3), I(0)}), "narrow", "empty");
  ExpectShape(Infer("select", {Shape{2, 6, 3}}, {I(1), I(-6)}), {2, 3});
  ExpectError(Infer("select", {Shape{2, 6}}, {I(0), I(2)}), "select", "index out of range");
  ExpectShape(Infer("flip", {Shape{2, 6}}, {L({0, -1})}), {2, 6});
  ExpectError(Infer("flip", {Shape{2, 6}}, {L({1, -1})}), "flip", "repeat");
  ExpectShape(Infer("pad", {Shape{2, 3, 4}}, {L({1, 2, 0, 3}), AttrValue::String("constant"),
                                             F(0.0)}),
              {2, 6, 7});
  ExpectError(Infer("pad", {Shape{2, 3}}, {L({1}), AttrValue::String("constant"), F(0.0)}),
              "pad", "pairs");
  ExpectError(Infer("pad", {Shape{2, 3}}, {L({-1, 0}), AttrValue::String("constant"), F(0.0)}),
              "pad", ">= 0");
  ExpectShape(Infer("triu", {Shape{3, 4}}, {I(0)}), {3, 4});
  ExpectShape(Infer("broadcast_to", {Shape{3, 1}}, {L({2, -1, 4})}), {2, 3, 4});
  ExpectError(Infer("broadcast_to", {Shape{3, 2}}, {L({3, 4})}), "broadcast_to", "broadcast");
}

TEST(ShapeRulesTest, ReduceAndRowWise) {
  ExpectShape(Infer("sum", {Shape{2, 3, 4}}, {I(1), B(false)}), {2, 4});
  ExpectShape(Infer("amax", {Shape{2, 3, 4}}, {I(-1), B(true)}), {2, 3, 1});
  ExpectShape(Infer("argmax", {Shape{5}}, {I(0), B(false)}), Shape{});
  ExpectShape(Infer("softmax", {Shape{2, 3}}, {I(-1)}), {2, 3});
  ExpectShape(Infer("cumsum", {Shape{2, 3}}, {I(0)}), {2, 3});
  ExpectError(Infer("sum", {Shape{2, 3, 4}}, {I(3), B(false)}), "sum", "dim 3 out of range");
  ExpectError(Infer("softmax", {Shape{2, 3}}, {I(-3)}), "softmax", "out of range for rank 2");
  ExpectShape(Infer("transpose", {Shape{2, 3, 4}}, {I(0), I(-1)}), {4, 3, 2});
  ExpectError(Infer("transpose", {Shape{2, 3}}, {I(0), I(2)}), "transpose", "dim 2");
}

TEST(ShapeRulesTest, Contractions) {
  ExpectShape(Infer("matmul", {Shape{2, 1, 4, 5}, Shape{3, 5, 6}}), {2, 3, 4, 6});
  ExpectShape(Infer("matmul", {Shape{4, 5}, Shape{5, 6}}), {4, 6});
  ExpectError(Infer("matmul", {Shape{4, 5}, Shape{4, 6}}), "matmul", "contracted");
  ExpectError(Infer("matmul", {Shape{2, 4, 5}, Shape{3, 5, 6}}), "matmul", "batch");
  ExpectError(Infer("matmul", {Shape{4, 5}, Shape{5}}), "matmul", "rank");
  ExpectShape(Infer("bmm", {Shape{2, 3, 4}, Shape{2, 4, 5}}), {2, 3, 5});
  ExpectError(Infer("bmm", {Shape{2, 3, 4}, Shape{3, 4, 5}}), "bmm", "batch");
  ExpectError(Infer("bmm", {Shape{3, 4}, Shape{4, 5}}), "bmm", "rank");
  ExpectShape(Infer("linear", {Shape{2, 3, 4}, Shape{6, 4}, Shape{6}}), {2, 3, 6});
  ExpectShape(Infer("linear", {Shape{4}, Shape{6, 4}, std::nullopt}), {6});
  ExpectError(Infer("linear", {Shape{3, 4}, Shape{6, 5}, std::nullopt}), "linear", "last dim");
  ExpectError(Infer("linear", {Shape{3, 4}, Shape{6, 4}, Shape{5}}), "linear", "bias");
}

TEST(ShapeRulesTest, Conv) {
  // (8 + 2 - 2 * 2 - 1) / 2 + 1 = 3
  ExpectShape(
      Infer("conv2d", {Shape{2, 4, 8, 8}, Shape{6, 2, 3, 3}, Shape{6}}, {I(2), I(1), I(2), I(2)}),
      {2, 6, 3, 3});
  ExpectShape(
      Infer("conv1d", {Shape{4, 10}, Shape{6, 4, 3}, std::nullopt}, {L({1}), L({0}), I(1), I(1)}),
      {6, 8});  // unbatched
  ExpectShape(Infer("conv3d", {Shape{1, 2, 5, 6, 7}, Shape{3, 2, 1, 2, 3}, std::nullopt},
                    {L({1, 2, 3}), I(0), I(1), I(1)}),
              {1, 3, 5, 3, 2});
  ExpectError(Infer("conv2d", {Shape{1, 3, 8, 8}, Shape{4, 2, 3, 3}, std::nullopt},
                    {I(1), I(0), I(1), I(1)}),
              "conv2d", "weight.shape[1] * groups");
  ExpectError(Infer("conv2d", {Shape{1, 4, 8, 8}, Shape{6, 2, 3, 3}, std::nullopt},
                    {I(1), I(0), I(1), I(3)}),
              "conv2d", "divisible by groups 3");
  ExpectError(
      Infer("conv2d", {Shape{1, 4, 8, 8}, Shape{6, 4, 3}, std::nullopt}, {I(1), I(0), I(1), I(1)}),
      "conv2d", "weight must have rank 4");
  ExpectError(Infer("conv2d", {Shape{1, 4, 2, 2}, Shape{6, 4, 3, 3}, std::nullopt},
                    {I(1), I(0), I(1), I(1)}),
              "conv2d", "kernel larger");
  ExpectError(
      Infer("conv2d", {Shape{1, 4, 8, 8}, Shape{6, 4, 3, 3}, Shape{4}}, {I(1), I(0), I(1), I(1)}),
      "conv2d", "bias");
  ExpectError(Infer("conv2d", {Shape{1, 4, 8, 8}, Shape{6, 4, 3, 3}, std::nullopt},
                    {I(0), I(0), I(1), I(1)}),
              "conv2d", "stride");
  ExpectError(Infer("conv2d", {Shape{1, 4, 8, 8}, Shape{6, 4, 3, 3}, std::nullopt},
                    {L({1, 1, 1}), I(0), I(1), I(1)}),
              "conv2d", "needs 1 or 2 values");
}

TEST(ShapeRulesTest, ConvTranspose) {
  // (5 - 1) * 2 - 2 + 1 * (3 - 1) + 1 + 1 = 10; C_out = 3 * groups 2.
  ExpectShape(Infer("conv_transpose2d", {Shape{2, 4, 5, 5}, Shape{4, 3, 3, 3}, Shape{6}},
                    {I(2), I(1), I(1), I(2), I(1)}),
              {2, 6, 10, 10});
  ExpectShape(Infer("conv_transpose1d", {Shape{4, 5}, Shape{4, 2, 3}, std::nullopt},
                    {I(1), I(0), I(0), I(1), I(2)}),
              {2, 9});
  ExpectError(Infer("conv_transpose2d", {Shape{2, 4, 5, 5}, Shape{3, 3, 3, 3}, std::nullopt},
                    {I(1), I(0), I(0), I(1), I(1)}),
              "conv_transpose2d", "weight.shape[0]");
  ExpectError(Infer("conv_transpose2d", {Shape{2, 4, 5, 5}, Shape{4, 3, 3, 3}, std::nullopt},
                    {I(1), I(0), I(1), I(1), I(1)}),
              "conv_transpose2d", "output_padding");
  ExpectError(Infer("conv_transpose2d", {Shape{2, 4, 5, 5}, Shape{4, 3, 3, 3}, std::nullopt},
                    {I(1), I(0), I(0), I(3), I(1)}),
              "conv_transpose2d", "groups 3");
  ExpectError(Infer("conv_transpose1d", {Shape{1, 4, 1}, Shape{4, 2, 1}, std::nullopt},
                    {I(1), I(3), I(0), I(1), I(1)}),
              "conv_transpose1d", "too small");
}

TEST(ShapeRulesTest, Pool) {
  ExpectShape(Infer("max_pool2d", {Shape{1, 3, 8, 8}}, {I(2), None(), I(0), I(1), B(false)}),
              {1, 3, 4, 4});  // stride None = kernel_size
  // ceil_mode: ceil((5 + 2 - 1 - 1) / 2) + 1 = 4, but the last window would start in the
  // right padding, so 3 (as PyTorch).
  ExpectShape(Infer("max_pool2d", {Shape{1, 1, 5, 5}}, {I(2), I(2), I(1), I(1), B(true)}),
              {1, 1, 3, 3});
  ExpectShape(Infer("avg_pool1d", {Shape{3, 8}}, {I(3), None(), I(0), B(false), B(true)}), {3, 2});
  ExpectShape(
      Infer("avg_pool3d", {Shape{1, 2, 4, 5, 6}}, {L({2, 2, 3}), I(1), I(1), B(true), B(false)}),
      {1, 2, 5, 6, 6});
  ExpectError(Infer("max_pool2d", {Shape{1, 1, 4, 4}}, {I(9), None(), I(0), I(1), B(false)}),
              "max_pool2d", "kernel larger");
  ExpectError(Infer("max_pool2d", {Shape{1, 1, 8, 8}}, {I(3), I(1), I(2), I(1), B(false)}),
              "max_pool2d", "at most half");
  ExpectError(Infer("max_pool1d", {Shape{1, 1, 8}}, {I(0), None(), I(0), I(1), B(false)}),
              "max_pool1d", "kernel_size");
  ExpectShape(Infer("adaptive_avg_pool2d", {Shape{2, 3, 7, 9}}, {L({3, 4})}), {2, 3, 3, 4});
  ExpectShape(Infer("adaptive_avg_pool1d", {Shape{3, 7}}, {I(5)}), {3, 5});
  ExpectShape(Infer("adaptive_avg_pool1d", {Shape{3, 7}}, {L({5})}), {3, 5});
  ExpectError(Infer("adaptive_avg_pool2d", {Shape{2, 3, 7, 9}}, {L({3})}), "adaptive_avg_pool2d",
              "must have 2 entries");
  ExpectError(Infer("adaptive_avg_pool2d", {Shape{2, 3, 7, 9}}, {I(0)}), "adaptive_avg_pool2d",
              "output_size");
}

TEST(ShapeRulesTest, Normalizations) {
  ExpectShape(Infer("batch_norm", {Shape{2, 3, 4}, Shape{3}, Shape{3}, std::nullopt, std::nullopt},
                    {B(false), F(0.1), F(1e-5)}),
              {2, 3, 4});
  ExpectError(Infer("batch_norm", {Shape{2, 3, 4}, Shape{4}, Shape{3}, std::nullopt, std::nullopt},
                    {B(false), F(0.1), F(1e-5)}),
              "batch_norm", "running_mean must have shape (3,)");
  ExpectError(Infer("batch_norm", {Shape{2, 3, 4}, Shape{3}, Shape{3}, std::nullopt, std::nullopt},
                    {B(true), F(0.1), F(1e-5)}),
              "batch_norm", "training");
  // Training mode is its own operator, whose running statistics come both or neither.
  const std::vector<AttrValue> train = {B(true), F(0.1), F(1e-5), B(true)};
  ExpectShape(Infer("batch_norm_train",
                    {Shape{2, 3, 4}, Shape{3}, Shape{3}, std::nullopt, std::nullopt}, train),
              {2, 3, 4});
  ExpectShape(
      Infer("batch_norm_train", {Shape{2, 3, 4}, Shape{3}, Shape{3}, Shape{3}, Shape{3}}, train),
      {2, 3, 4});
  ExpectError(Infer("batch_norm_train",
                    {Shape{2, 3, 4}, std::nullopt, std::nullopt, Shape{3}, std::nullopt}, train),
              "batch_norm_train", "both be tensors or both be None");
  ExpectShape(
      Infer("layer_norm", {Shape{2, 3, 4}, Shape{3, 4}, std::nullopt}, {L({3, 4}), F(1e-5)}),
      {2, 3, 4});
  ExpectError(Infer("layer_norm", {Shape{2, 3, 4}, std::nullopt, std::nullopt}, {L({3}), F(1e-5)}),
              "layer_norm", "trailing dims");
  ExpectError(Infer("layer_norm", {Shape{2, 3, 4}, Shape{3}, std::nullopt}, {L({4}), F(1e-5)}),
              "layer_norm", "weight must have shape (4,)");
  ExpectShape(Infer("group_norm", {Shape{2, 6, 5}, Shape{6}, Shape{6}}, {I(3), F(1e-5)}),
              {2, 6, 5});
  ExpectError(Infer("group_norm", {Shape{2, 6, 5}, std::nullopt, std::nullopt}, {I(4), F(1e-5)}),
              "group_norm", "num_groups 4");
  ExpectError(Infer("instance_norm",
                    {Shape{2, 3, 1}, std::nullopt, std::nullopt, std::nullopt, std::nullopt},
                    {B(true), F(0.1), F(1e-5)}),
              "instance_norm", "spatial");
  ExpectError(Infer("instance_norm",
                    {Shape{2, 3, 4}, std::nullopt, std::nullopt, std::nullopt, std::nullopt},
                    {B(false), F(0.1), F(1e-5)}),
              "instance_norm", "running_mean");
  ExpectError(
      Infer("instance_norm", {Shape{2, 3, 4}, std::nullopt, Shape{3}, std::nullopt, std::nullopt},
            {B(true), F(0.1), F(1e-5)}),
      "instance_norm", "both be None or neither");
}

TEST(ShapeRulesTest, BadArgumentsAreErrorsNotCrashes) {
  ExpectError(Infer("relu", {Shape{0, 3}}), "relu", "size 0");
  ExpectError(Infer("relu", {Shape{-2, 3}}), "relu", "size -2");
  ExpectError(Infer("relu", {}), "relu", "expects 1 tensor arguments, got 0");
  ExpectError(Infer("add", {Shape{2}, std::nullopt}), "add", "missing tensor 'other'");
  ExpectError(Infer("sum", {Shape{2, 3}}, {I(0)}), "sum", "expects 2 attributes, got 1");
  ExpectError(Infer("sum", {Shape{2, 3}}, {F(0.5), B(false)}), "sum", "expects an int");
  ExpectError(Infer("sum", {Shape{2, 3}}, {None(), B(false)}), "sum", "missing attribute 'dim'");
  ExpectError(Infer("conv2d", {Shape{1, 4, 8, 8}, Shape{6, 4, 3, 3}, std::nullopt},
                    {AttrValue::String("x"), I(0), I(1), I(1)}),
              "conv2d", "attribute 'stride' expects an int or a list of ints");
  ExpectError(
      Infer("conv2d", {Shape{4, 8}, Shape{6, 4, 3, 3}, std::nullopt}, {I(1), I(0), I(1), I(1)}),
      "conv2d", "input rank 2 outside [3, 4]");
  ExpectError(Infer("F.gelu", {Shape{2}}, {AttrValue::String("erf")}), "gelu", "not one of");
  ExpectError(Infer("clamp", {Shape{2}}, {None(), None()}), "clamp", "at least one");
  ExpectError(Infer("F.hardtanh", {Shape{2}}, {F(1.0), F(-1.0)}), "hardtanh", "min_val");
  ExpectError(Infer("relu", {Shape{int64_t{1} << 40}}), "relu", "size");
  ExpectError(Infer("adaptive_avg_pool3d", {Shape{1, 1, 1, 1}}, {L({1 << 30, 1 << 30, 1 << 30})}),
              "adaptive_avg_pool3d", "too large");
  ExpectError(Infer("randn", {}, {L({2, 0})}), "randn", "dim < 1");
  ExpectShape(Infer("randn", {}, {L({2, 3})}), {2, 3});
  // Python accepts an int where a float is expected.
  ExpectShape(Infer("clamp", {Shape{2}}, {I(0), None()}), {2});
}

}  // namespace
}  // namespace drtriton
