// Deterministic random numbers for the synthesizer: every sample draws from its own
// generator, seeded by hashing (global seed, sample index), so the output does not depend
// on the thread count or on which thread ran which sample.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace drtriton::synth {

// SplitMix64's finalizer: a bijective 64-bit mix; good enough to decorrelate seeds.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The seed of sample `index` of a run with `global_seed`.
inline uint64_t SampleSeed(uint64_t global_seed, uint64_t index) {
  return Mix64(Mix64(global_seed) ^ Mix64(index + 0x632be59bd9b4e019ULL));
}

// xoshiro256** (public domain algorithm by Blackman and Vigna), seeded through Mix64.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& s : state_) seed = s = Mix64(seed);
  }
  uint64_t Next() {
    const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = Rotl(state_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [lo, hi] (lo <= hi).
  int64_t Int(int64_t lo, int64_t hi) {
    const auto span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(span == 0 ? Next() : Next() % span);
  }
  bool Bernoulli(double p) { return Uniform() < p; }
  // Log-uniform integer in [lo, hi] (lo >= 0): small and large magnitudes equally likely,
  // so that sampled dims spread over their range instead of piling near the top.
  int64_t LogUniform(int64_t lo, int64_t hi) {
    if (lo >= hi) return lo;
    const double a = std::log(static_cast<double>(lo) + 1.0);
    const double b = std::log(static_cast<double>(hi) + 2.0);
    auto v = static_cast<int64_t>(std::floor(std::exp(a + Uniform() * (b - a)))) - 1;
    return v < lo ? lo : (v > hi ? hi : v);
  }
  template <class T>
  const T& Pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(Int(0, static_cast<int64_t>(items.size()) - 1))];
  }
  template <class T>
  void Shuffle(std::vector<T>& items) {
    for (size_t k = items.size(); k > 1; --k)
      std::swap(items[k - 1], items[static_cast<size_t>(Int(0, static_cast<int64_t>(k) - 1))]);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace drtriton::synth
