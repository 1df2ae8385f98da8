// FLOPs and bytes on hand-computed values (contractions match torch's FlopCounterMode).
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "catalog/catalog.h"

namespace drtriton {
namespace {

struct Counts {
  double flops = -1, bytes = -1;
};

Counts Count(const char* name, std::vector<std::optional<Shape>> tensors,
             std::vector<AttrValue> attrs = {}) {
  const OpInfo& op = GetOp(FindOp(name));
  const OpArgs args{std::move(tensors), std::move(attrs)};
  auto out = InferShape(op, args);
  EXPECT_TRUE(out.ok()) << out.error().ToString();
  if (!out.ok()) return {};
  return {CountFlops(op, args, out.value()), CountBytes(op, args, out.value())};
}

AttrValue I(int64_t v) { return AttrValue::Int(v); }

TEST(FlopsTest, ContractionsCountTwoPerMultiplyAdd) {
  EXPECT_EQ(Count("matmul", {Shape{3, 4, 5}, Shape{5, 6}}).flops, 2.0 * 3 * 4 * 6 * 5);
  EXPECT_EQ(Count("matmul", {Shape{2, 1, 4, 5}, Shape{3, 5, 6}}).flops, 1440.0);
  EXPECT_EQ(Count("bmm", {Shape{2, 3, 4}, Shape{2, 4, 5}}).flops, 240.0);
  // Bias is not counted, as in FlopCounterMode.
  EXPECT_EQ(Count("linear", {Shape{2, 3, 4}, Shape{6, 4}, Shape{6}}).flops, 288.0);
  EXPECT_EQ(Count("linear", {Shape{4}, Shape{6, 4}, std::nullopt}).flops, 48.0);
}

TEST(FlopsTest, BoolTensorsCountOneBytePerElement) {
  // gt: two float inputs (12 + 3 elements), a bool (4, 3) output.
  const Counts gt = Count("gt", {Shape{4, 3}, Shape{3}});
  EXPECT_EQ(gt.flops, 12.0);
  EXPECT_EQ(gt.bytes, (12.0 + 3) * 4 + 12 * 1);
  // where: a bool (3, 1) condition, float (2, 3, 4) and (4,) branches, a float (2, 3, 4) result.
  const Counts where = Count("where", {Shape{3, 1}, Shape{2, 3, 4}, Shape{4}});
  EXPECT_EQ(where.flops, 24.0);
  EXPECT_EQ(where.bytes, 3.0 * 1 + (24.0 + 4) * 4 + 24 * 4);
}

TEST(FlopsTest, NllLossCountsThePickedElementsAndEightByteTargets) {
  // (6, 10) scores, (6,) int64 targets: one score a row read, negated and summed.
  const Counts loss =
      Count("nll_loss", {Shape{6, 10}, Shape{6}}, {I(-100), AttrValue::String("mean")});
  EXPECT_EQ(loss.flops, 2.0 * 6);
  EXPECT_EQ(loss.bytes, 6.0 * 4 + 6.0 * 8 + 1 * 4);
}

TEST(FlopsTest, EmbeddingReadsThePickedRowsAndEightByteIndices) {
  // (3, 5) int64 indices into a (100, 8) weight: 15 rows of 8 read, (3, 5, 8) written.
  const Counts lookup = Count("embedding", {Shape{3, 5}, Shape{100, 8}}, {});
  EXPECT_EQ(lookup.flops, 0.0);
  EXPECT_EQ(lookup.bytes, 15.0 * 8 + 15.0 * 8 * 4 + 15.0 * 8 * 4);
}

TEST(FlopsTest, ConvolutionsMatchFlopCounterMode) {
  // 2 * N * C_out * H_out * W_out * (C_in / g) * k * k = 2 * 2 * 6 * 64 * 2 * 9
  EXPECT_EQ(
      Count("conv2d", {Shape{2, 4, 8, 8}, Shape{6, 2, 3, 3}, Shape{6}}, {I(1), I(1), I(1), I(2)})
          .flops,
      27648.0);
  // Unbatched counts as batch 1.
  EXPECT_EQ(Count("conv2d", {Shape{4, 8, 8}, Shape{6, 2, 3, 3}, Shape{6}}, {I(1), I(1), I(1), I(2)})
                .flops,
            13824.0);
  // Transposed: per input element: 2 * N * C_in * H_in * W_in * (C_out / g) * k * k.
  EXPECT_EQ(Count("conv_transpose2d", {Shape{2, 4, 5, 5}, Shape{4, 3, 3, 3}, Shape{6}},
                  {I(2), I(1), I(1), I(2), I(1)})
                .flops,
            2.0 * 2 * 4 * 25 * 3 * 9);
  EXPECT_EQ(Count("conv3d", {Shape{1, 2, 4, 4, 4}, Shape{3, 2, 2, 2, 2}, std::nullopt},
                  {I(2), I(1), I(2), I(1)})
                .flops,
            768.0);
}

TEST(FlopsTest, OtherOperatorsFollowDocsFlops) {
  EXPECT_EQ(Count("add", {Shape{2, 3, 4}, Shape{4}}).flops, 24.0);  // 1 per output
  EXPECT_EQ(Count("F.gelu", {Shape{10}}, {AttrValue::String("none")}).flops, 50.0);
  EXPECT_EQ(Count("sum", {Shape{2, 3, 4}}, {I(1), AttrValue::Bool(false)}).flops, 24.0);
  EXPECT_EQ(Count("softmax", {Shape{2, 3}}, {I(1)}).flops, 30.0);
  EXPECT_EQ(Count("transpose", {Shape{2, 3}}, {I(0), I(1)}).flops, 0.0);
  EXPECT_EQ(Count("group_norm", {Shape{2, 4, 3}, std::nullopt, std::nullopt},
                  {I(2), AttrValue::Float(1e-5)})
                .flops,
            8.0 * 24);
  // Pooling: kernel volume per output element: (1, 3, 4, 4) outputs * 4 taps.
  EXPECT_EQ(Count("max_pool2d", {Shape{1, 3, 8, 8}},
                  {I(2), AttrValue::None(), I(0), I(1), AttrValue::Bool(false)})
                .flops,
            192.0);
  // Adaptive 7 -> 3: windows [0, 3), [2, 5), [4, 7): 9 taps per (n, c) along the dim.
  EXPECT_EQ(Count("adaptive_avg_pool1d", {Shape{2, 7}}, {I(3)}).flops, 18.0);
}

TEST(FlopsTest, BytesCountInputsAndOutputWithInt64Indices) {
  EXPECT_EQ(Count("add", {Shape{2, 3}, Shape{3}}).bytes, (6 + 3 + 6) * 4.0);
  EXPECT_EQ(Count("argmax", {Shape{2, 3}}, {I(1), AttrValue::Bool(false)}).bytes,
            6 * 4.0 + 2 * 8.0);
  EXPECT_EQ(Count("linear", {Shape{2, 4}, Shape{6, 4}, std::nullopt}).bytes, (8 + 24 + 12) * 4.0);
}

}  // namespace
}  // namespace drtriton
