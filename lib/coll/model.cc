#include "lib/coll/model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rankshape::coll {
namespace {

using A = Algorithm;

int log2_ceil(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

// Costs of algorithms on one communicator of n members whose messages all
// pay link l, for m bytes.
double step(const LinkCost& l, double m) { return l.alpha + m * l.beta; }

double bcast_cost(A a, int n, double m, const LinkCost& l, double segment) {
  if (n <= 1) return 0;
  const int k = log2_ceil(n);
  switch (a) {
    case A::kBinomial:
      return k * step(l, m);
    case A::kScatterAllgather:
      return (k + n - 1) * l.alpha + 2.0 * (n - 1) / n * m * l.beta;
    case A::kChain: {
      const double s = std::min(m, segment > 0 ? segment : 65536.0);
      const double u = s > 0 ? std::ceil(m / s) : 1;
      return (n - 1 + u - 1) * step(l, s);
    }
    default:  // native: the better of the two classic ones
      return std::min(bcast_cost(A::kBinomial, n, m, l, 0),
                      bcast_cost(A::kScatterAllgather, n, m, l, 0));
  }
}

double reduce_cost(A a, int n, double m, const LinkCost& l, double gamma) {
  if (n <= 1) return 0;
  const int k = log2_ceil(n);
  const double binomial = k * (step(l, m) + m * gamma);
  if (a == A::kBinomial) return binomial;
  // Native also has reduce-scatter then gather (Rabenseifner's reduce).
  const double halving =
      2 * k * l.alpha + 2.0 * (n - 1) / n * m * l.beta + (n - 1.0) / n * m * gamma;
  return std::min(binomial, halving);
}

double allreduce_cost(A a, int n, double m, const LinkCost& l, double gamma) {
  if (n <= 1) return 0;
  const int k = log2_ceil(n);
  const double doubling = k * (step(l, m) + m * gamma);
  const double ring = 2.0 * (n - 1) * step(l, m / n) + (n - 1.0) / n * m * gamma;
  const double rabenseifner =
      2 * k * l.alpha + 2.0 * (n - 1) / n * m * l.beta + (n - 1.0) / n * m * gamma;
  switch (a) {
    case A::kRecursiveDoubling:
      return doubling;
    case A::kRing:
      return ring;
    case A::kRabenseifner:
      return rabenseifner;
    default:
      return std::min({doubling, ring, rabenseifner});
  }
}

// Binomial gather (or scatter) of n members holding `held` bytes each.
double gather_cost(int n, double held, const LinkCost& l) {
  if (n <= 1) return 0;
  return log2_ceil(n) * l.alpha + (n - 1) * held * l.beta;
}

// Flat algorithms on the whole communicator: the link a message between
// ranks `distance` apart crosses.
struct Flat {
  const Model& model;
  std::vector<int> block;  // ranks per level j group (j < depth)

  explicit Flat(const Model& m) : model(m) {
    int b = 1;
    for (int j = 0; j < m.depth(); ++j) block.push_back(b *= m.sizes[static_cast<std::size_t>(j)]);
  }
  const LinkCost& link(int distance) const {
    if (!model.contiguous) return model.links.back();
    std::size_t j = 0;
    while (j < block.size() && block[j] <= distance) ++j;
    return model.links[j];
  }
  // A step in which every rank sends at once: when it leaves the node, the
  // node's ranks share its link (their bytes queue behind each other).
  LinkCost shared(int distance) const {
    LinkCost l = link(distance);
    if (&link(distance) != &model.links.front() && !block.empty()) l.beta *= block.front();
    return l;
  }
  int p() const { return model.ranks; }
  int steps() const { return log2_ceil(p()); }
  // Binomial tree (one sender per node and step where it matters) or
  // recursive doubling (every rank at once, `all`): step k pairs ranks 2^k
  // apart and moves bytes(k).
  template <typename Bytes>
  double doubling(Bytes bytes, double gamma, bool all = false) const {
    double t = 0;
    for (int k = 0; k < steps(); ++k) {
      t += step(all ? shared(1 << k) : link(1 << k), bytes(k)) + bytes(k) * gamma;
    }
    return t;
  }
  // On contiguous groups one rank per node sends off the node; otherwise
  // all of them.
  double ring(double m_step, double gamma_bytes, int rounds) const {
    const LinkCost l = model.contiguous ? link(p() - 1) : shared(p() - 1);
    return rounds * (step(l, m_step) + gamma_bytes);
  }
};

double native_cost(Collective c, const Model& model, double m) {
  const Flat f(model);
  const int p = f.p();
  if (p <= 1) return 0;
  const double g = model.gamma;
  const auto whole = [m](int) { return m; };
  const auto halves = [m](int k) { return m / (2 << k); };
  switch (c) {
    case Collective::kBcast:
      return std::min(f.doubling(whole, 0), f.doubling(halves, 0) + f.ring(m / p, 0, p - 1));
    case Collective::kReduce:
      return std::min(f.doubling(whole, g), f.doubling(halves, g, true) + f.doubling(halves, 0));
    case Collective::kAllreduce:
      return std::min({f.doubling(whole, g, true),
                       f.doubling(halves, g, true) + f.doubling(halves, 0, true),
                       f.ring(m / p, m / p * g, p - 1) + f.ring(m / p, 0, p - 1)});
    case Collective::kGather:
    case Collective::kScatter:
      return f.doubling([m](int k) { return m * (1 << k); }, 0);
    case Collective::kAllgather:
      return std::min(f.ring(m, 0, p - 1),
                      f.doubling([m](int k) { return m * (1 << k); }, 0, true));
    case Collective::kReduceScatterBlock:
      return std::min(f.doubling([m, p](int k) { return m * p / (2 << k); }, g, true),
                      f.ring(m, m * g, p - 1));
    case Collective::kAlltoall: {
      double t = 0;
      for (int d = 1; d < p; ++d) t += step(f.shared(d), m);
      return t;
    }
    case Collective::kBarrier:
      return f.doubling([](int) { return 0.0; }, 0);
  }
  return 0;
}

double hierarchical_cost(Collective c, const Config& config, const Model& model, double m) {
  const int d = model.depth();
  const auto n = [&](int j) { return model.sizes[static_cast<std::size_t>(j)]; };
  const auto l = [&](int j) -> const LinkCost& { return model.links[static_cast<std::size_t>(j)]; };
  const double g = model.gamma;
  const double p = model.ranks;
  // held[j]: ranks each level j member stands for (1 at level 0).
  std::vector<double> held(static_cast<std::size_t>(d + 1), 1);
  for (int j = 1; j <= d; ++j) held[static_cast<std::size_t>(j)] = held[j - 1] * n(j - 1);
  const double seg = static_cast<double>(config.segment_bytes);
  double t = 0;
  if (config.segment_bytes > 0) {
    // Stages at message size `seg`; u segments fill the pipeline.
    const double s = std::min(seg, m);
    const double u = s > 0 ? std::ceil(m / s) : 1;
    std::vector<double> stages;
    for (int j = 0; j <= d; ++j) {
      if (c == Collective::kBcast) stages.push_back(bcast_cost(A::kNative, n(j), s, l(j), 0));
      if (c == Collective::kReduce) stages.push_back(reduce_cost(A::kNative, n(j), s, l(j), g));
      if (c == Collective::kAllreduce) {
        if (j < d) {
          stages.push_back(reduce_cost(A::kNative, n(j), s, l(j), g));
          stages.push_back(bcast_cost(A::kNative, n(j), s, l(j), 0));
        } else {
          stages.push_back(allreduce_cost(A::kNative, n(j), s, l(j), g));
        }
      }
    }
    double sum = 0, slowest = 0;
    for (double x : stages) {
      sum += x;
      slowest = std::max(slowest, x);
    }
    return sum + (u - 1) * slowest;
  }
  for (int j = 0; j <= d; ++j) {
    const A a = config.level(j);
    const double h = held[static_cast<std::size_t>(j)];
    switch (c) {
      case Collective::kBcast:
        t += bcast_cost(a, n(j), m, l(j), seg);
        break;
      case Collective::kReduce:
        t += reduce_cost(a, n(j), m, l(j), g);
        break;
      case Collective::kAllreduce:
        t += j < d ? reduce_cost(a, n(j), m, l(j), g) + bcast_cost(a, n(j), m, l(j), 0)
                   : allreduce_cost(a, n(j), m, l(j), g);
        break;
      case Collective::kGather:
      case Collective::kScatter:
        t += gather_cost(n(j), h * m, l(j));
        break;
      case Collective::kAllgather:
        t += j < d ? gather_cost(n(j), h * m, l(j)) + bcast_cost(A::kNative, n(j), p * m, l(j), 0)
                   : std::min((n(j) - 1) * step(l(j), h * m),
                              log2_ceil(n(j)) * l(j).alpha + (n(j) - 1) * h * m * l(j).beta);
        break;
      case Collective::kReduceScatterBlock:
        t += j < d ? reduce_cost(A::kNative, n(j), p * m, l(j), g) + gather_cost(n(j), h * m, l(j))
                   : allreduce_cost(A::kRabenseifner, n(j), p * m, l(j), g) / 2;
        break;
      case Collective::kAlltoall:
        // Node members to and from their leader; leaders exchange pairwise.
        if (j == 0) t += 2 * gather_cost(n(0), p * m, l(0));
        if (j == d) {
          const double leaders = p / n(0);
          t += (leaders - 1) * step(l(d), n(0) * n(0) * m);
        }
        break;
      case Collective::kBarrier:
        t += (j < d ? 2 : 1) * log2_ceil(n(j)) * l(j).alpha;
        break;
    }
  }
  return t;
}

}  // namespace

double predict(Collective c, const Config& config, const Model& model, std::int64_t bytes) {
  const double m = c == Collective::kBarrier ? 0 : static_cast<double>(bytes);
  return config.hierarchical ? hierarchical_cost(c, config, model, m) : native_cost(c, model, m);
}

Choice choose(Collective c, const Model& model, std::int64_t bytes, double margin,
              bool force_hierarchical) {
  Choice best;
  best.native_predicted = best.predicted = predict(c, Config{}, model, bytes);
  double best_hierarchical = std::numeric_limits<double>::infinity();
  Config winner;
  for (const Config& config : candidates(c, model.depth(), bytes)) {
    if (!config.hierarchical) continue;
    const double t = predict(c, config, model, bytes);
    if (t < best_hierarchical) {
      best_hierarchical = t;
      winner = config;
    }
  }
  if (force_hierarchical || best_hierarchical < best.native_predicted * (1 - margin)) {
    best.config = winner;
    best.predicted = best_hierarchical;
  }
  return best;
}

}  // namespace rankshape::coll
