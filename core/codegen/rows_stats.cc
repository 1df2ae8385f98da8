// Running statistics of rows kernels (rows.h).
//
// Online softmax: per lane, the running max m and s = sum of exp(x - m) over the lane's
// elements, rescaled by exp(m_old - m_new) whenever the max grows; lanes (or chunks) combine
// the same way.  One read of the row gives the max and the sum that softmax needs.
//
// Welford: lane l has seen c_l elements, with mean mean_l and squared deviations m2_l.  Every
// block but the row's last is full, so at block k (from 0) every lane in range has seen k
// elements before it: the update weight is 1 / (k + 1), one scalar per block.  Lanes (or
// chunks) combine exactly (Chan, Golub and LeVeque's parallel formula):
//   mean = sum(c_l * mean_l) / n,  M2 = sum(m2_l + c_l * (mean_l - mean)^2).
// It needs no second read for the variance, and unlike E[x^2] - mean^2 it does not cancel
// when the mean is large against the spread.
#include <string>

#include "codegen/rows.h"

namespace drtriton::codegen {

void MaxSumInit(PythonWriter& w) {
  w.Line("m_acc = tl.full([BLOCK_O, BLOCK_R], float('-inf'), dtype=tl.float32)");
  w.Line("s_acc = tl.zeros([BLOCK_O, BLOCK_R], dtype=tl.float32)");
}

void MaxSumUpdate(PythonWriter& w, const std::string& x) {
  w.Line("xm = tl.where(mask, " + x + ", float('-inf'))");
  w.Line("m_new = tl.maximum(m_acc, xm)");
  // A lane that has seen only -inf (masked lanes, or -inf inputs) keeps s = 0: exp(-inf - 0)
  // is 0 where exp(-inf - (-inf)) would be NaN.
  w.Line("m_ref = tl.where(m_new == float('-inf'), 0.0, m_new)");
  w.Line("s_acc = s_acc * tl.exp(m_acc - m_ref) + tl.exp(xm - m_ref)");
  w.Line("m_acc = m_new");
}

void MaxSumCombine(PythonWriter& w, const std::string& m, const std::string& s,
                   const char* reduce) {
  const std::string how = reduce;
  w.Line("row_max = tl.max(" + m + ", " + how + ")");
  w.Line("row_sum = tl.sum(" + s + " * tl.exp(" + m + " - row_max), " + how + ")");
}

void WelfordInit(PythonWriter& w) {
  w.Line("mean_acc = tl.zeros([BLOCK_O, BLOCK_R], dtype=tl.float32)");
  w.Line("m2_acc = tl.zeros([BLOCK_O, BLOCK_R], dtype=tl.float32)");
}

void WelfordFirst(PythonWriter& w, const std::string& x) {
  w.Line("mean_acc = tl.where(mask, " + x + ", 0.0)");
  w.Line("m2_acc = tl.zeros([BLOCK_O, BLOCK_R], dtype=tl.float32)");
}

void WelfordUpdate(PythonWriter& w, const std::string& x) {
  w.Line("delta = " + x + " - mean_acc");
  w.Line("mean_acc += tl.where(mask, delta * (1.0 / (r0 // BLOCK_R + 1)), 0.0)");
  w.Line("m2_acc += tl.where(mask, delta * (" + x + " - mean_acc), 0.0)");
}

void WelfordCombine(PythonWriter& w, const std::string& cnt, const std::string& mean_of,
                    const std::string& m2_of, const std::string& n, const char* reduce) {
  const std::string how = reduce;
  w.Line("mean = tl.sum(" + cnt + " * " + mean_of + ", " + how + ") / " + n);
  w.Line("dev = " + mean_of + " - mean");
  w.Line("m2 = tl.sum(" + m2_of + " + " + cnt + " * dev * dev, " + how + ")");
}

}  // namespace drtriton::codegen
