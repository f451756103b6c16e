#include "lib/coll/model.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "lib/coll/algorithms.h"

namespace rankshape::coll {
namespace {

using A = Algorithm;

int log2_ceil(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

// Costs of algorithms on one communicator of n members whose messages all
// pay link l, for m bytes. step(): one message alone on the link;
// busy(): every member sending at once (ring, recursive doubling, the
// halving and doubling of Rabenseifner, a chain's steady state).
double step(const LinkCost& l, double m) { return l.alpha_at(m) + m * l.beta; }
double busy(const LinkCost& l, double m) { return l.alpha_at(m) + m * l.loaded(); }

// Latencies of the k steps of recursive halving of m bytes: m / 2, m / 4,
// ... each; recursive doubling from m bytes is the halving of m 2^k.
double halving_latency(int k, double m, const LinkCost& l) {
  double t = 0;
  for (int i = 1; i <= k; ++i) t += l.alpha_at(m / (1 << i));
  return t;
}

// A binomial tree whose step k (k = 0 .. log n - 1, from the root out)
// has 2^k senders moving bytes(k) each.
template <typename Bytes>
double binomial(int n, const LinkCost& l, Bytes bytes) {
  double t = 0;
  for (int k = 0; (1 << k) < n; ++k) {
    t += l.alpha_at(bytes(k)) + bytes(k) * l.beta_with(1 << k, n);
  }
  return t;
}

// A k-nomial tree (as lib/coll/algorithms.cc builds it): rounds from the
// root out, each a parent's messages to up to radix - 1 children sent at
// once (one latency; their bytes queue on its link), plus combining them
// (gamma: 0 for a bcast).
double knomial(int n, double m, const LinkCost& l, double gamma) {
  constexpr int kRadix = kKnomialRadix;
  int top = 1;
  while (top < n) top *= kRadix;
  double t = 0;
  for (int place = top / kRadix; place > 0; place /= kRadix) {
    const int messages = std::min(kRadix - 1, (n - 1) / place);
    const int senders = std::max(1, n / (kRadix * place));
    t += l.alpha_at(m) + messages * m * (l.beta_with(senders, n) + gamma);
  }
  return t;
}

// A chain of n members moving m bytes in segments (64 KiB unless given,
// as lib/coll/algorithms.cc cuts them): n - 1 steps fill it, one more per
// further segment, each step with as many links busy as segments in
// flight (at most n - 1) and each receiver combining the segment (gamma:
// 0 for a bcast).
double chain(int n, double m, const LinkCost& l, double segment, double gamma) {
  const double s = std::min(m, segment > 0 ? segment : 65536.0);
  const double u = s > 0 ? std::ceil(m / s) : 1;
  const double sending = std::min(u, n - 1.0);
  return (n - 1 + u - 1) * (l.alpha_at(s) + s * (l.beta_with(sending, n) + gamma));
}

// A pipelined binary tree of n members (as lib/coll/algorithms.cc builds
// it: depth floor(log2 n)) moving m bytes in segments
// (binary_segment_bytes unless given): depth steps fill it, one more per
// further segment; in each a parent's link carries the segment to (or
// from) both children, every edge with a segment in flight loads the
// level's shared capacity, and a reduce's parent combines two segments
// (gamma: 0 for a bcast).
double binary_tree(int n, double m, const LinkCost& l, double segment, double gamma) {
  const double s = std::min(
      m, segment > 0 ? segment
                     : static_cast<double>(binary_segment_bytes(static_cast<std::int64_t>(m))));
  const double u = s > 0 ? std::ceil(m / s) : 1;
  int depth = 0;
  while ((2 << depth) <= n) ++depth;
  const double edges = std::min(2 * u, n - 1.0);
  return (depth + u - 1) *
         (l.alpha_at(s) + s * (std::max(2 * l.beta, l.beta_with(edges, n)) + 2 * gamma));
}

double bcast_cost(A a, int n, double m, const LinkCost& l, double segment) {
  if (n <= 1) return 0;
  switch (a) {
    case A::kBinomial:
      return binomial(n, l, [m](int) { return m; });
    case A::kKnomial:
      return knomial(n, m, l, 0);
    case A::kScatterAllgather: {
      const double scatter = binomial(n, l, [m](int k) { return m / (2 << k); });
      if (!scatter_allgather_doubles(static_cast<std::int64_t>(m), n)) {
        return scatter + (n - 1) * busy(l, m / n);
      }
      double t = scatter;
      for (int k = 0; (1 << k) < n; ++k) t += busy(l, m / n * (1 << k));
      return t;
    }
    case A::kChain:
      return chain(n, m, l, segment, 0);
    case A::kBinary:
      return binary_tree(n, m, l, segment, 0);
    default:  // native: the better of the two classic ones
      return std::min(bcast_cost(A::kBinomial, n, m, l, 0),
                      bcast_cost(A::kScatterAllgather, n, m, l, 0));
  }
}

// Binomial gather (or scatter) of n members holding `held` bytes each:
// step k has about n / 2^(k+1) senders of up to 2^k blocks.
double gather_cost(int n, double held, const LinkCost& l) {
  double t = 0;
  for (int k = 0; (1 << k) < n; ++k) {
    const int blocks = std::min(1 << k, n - (1 << k));
    t += l.alpha_at(held * blocks) + held * blocks * l.beta_with(std::max(1, n >> (k + 1)), n);
  }
  return t;
}

double reduce_cost(A a, int n, double m, const LinkCost& l, double gamma, double segment = 0) {
  if (n <= 1) return 0;
  if (a == A::kChain) return chain(n, m, l, segment, gamma);
  if (a == A::kBinary) return binary_tree(n, m, l, segment, gamma);
  if (a == A::kKnomial) return knomial(n, m, l, gamma);
  const int k = log2_ceil(n);
  const double tree = binomial(n, l, [m](int) { return m; }) + k * m * gamma;
  if (a == A::kBinomial) return tree;
  // Reduce-scatter then gather (Rabenseifner's reduce); native has both.
  const double halving = halving_latency(k, m, l) + (n - 1.0) / n * m * (l.loaded() + gamma) +
                         gather_cost(n, m / n, l);
  if (a == A::kRabenseifner) return halving;
  return std::min(tree, halving);
}

double allreduce_cost(A a, int n, double m, const LinkCost& l, double gamma) {
  if (n <= 1) return 0;
  const int k = log2_ceil(n);
  const double doubling = k * (busy(l, m) + m * gamma);
  const double ring = 2.0 * (n - 1) * busy(l, m / n) + (n - 1.0) / n * m * gamma;
  const double rabenseifner =
      2 * halving_latency(k, m, l) + 2.0 * (n - 1) / n * m * l.loaded() + (n - 1.0) / n * m * gamma;
  switch (a) {
    case A::kBinomial:
    case A::kKnomial:
      return reduce_cost(a, n, m, l, gamma) + bcast_cost(a, n, m, l, 0);
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

// Flat algorithms on the whole communicator: the link a message between
// ranks `distance` apart crosses, and how many messages share it.
struct Flat {
  const Model& model;
  std::vector<int> block;  // ranks per level j group (j < depth)

  explicit Flat(const Model& m) : model(m) {
    int b = 1;
    for (int j = 0; j < m.depth(); ++j) block.push_back(b *= m.sizes[static_cast<std::size_t>(j)]);
  }
  std::size_t level_of(int distance) const {
    if (!model.contiguous) return model.links.size() - 1;
    std::size_t j = 0;
    while (j < block.size() && block[j] <= distance) ++j;
    return j;
  }
  // A tree step: binomial trees send far first, so a step at `distance`
  // has about p / (2 distance) senders, each in its own group.
  LinkCost tree(int distance) const {
    const std::size_t j = level_of(distance);
    LinkCost l = model.links[j];
    l.beta = l.beta_with(std::max(1, p() / (2 * distance)), model.sizes[j]);
    return l;
  }
  // A step in which every rank sends at once: the level's loaded link, and
  // the ranks of a group below it queue behind each other.
  LinkCost shared(int distance) const {
    const std::size_t j = level_of(distance);
    LinkCost l = model.links[j];
    l.beta = l.loaded() * (j > 0 ? block[j - 1] : 1);
    return l;
  }
  int p() const { return model.ranks; }
  int steps() const { return log2_ceil(p()); }
  // Binomial tree or recursive doubling (every rank at once, `all`): step k
  // pairs ranks 2^k apart and moves bytes(k).
  template <typename Bytes>
  double doubling(Bytes bytes, double gamma, bool all = false) const {
    double t = 0;
    for (int k = 0; k < steps(); ++k) {
      t += step(all ? shared(1 << k) : tree(1 << k), bytes(k)) + bytes(k) * gamma;
    }
    return t;
  }
  // On contiguous groups one message per group crosses each boundary (the
  // slowest loaded link paces the ring); otherwise all of them.
  double ring(double m_step, double gamma_bytes, int rounds) const {
    LinkCost l = shared(p() - 1);
    if (model.contiguous) {
      l.beta = 0;
      for (std::size_t j = 1; j < model.links.size(); ++j) {
        l.beta = std::max(l.beta, model.links[j].loaded());
      }
    }
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
        t += reduce_cost(a, n(j), m, l(j), g, seg);
        break;
      case Collective::kAllreduce:
        t += j < d ? reduce_cost(a, n(j), m, l(j), g, seg) + bcast_cost(a, n(j), m, l(j), seg)
                   : allreduce_cost(a, n(j), m, l(j), g);
        break;
      case Collective::kGather:
      case Collective::kScatter:
        t += gather_cost(n(j), h * m, l(j));
        break;
      case Collective::kAllgather:
        t += j < d
                 ? gather_cost(n(j), h * m, l(j)) + bcast_cost(A::kNative, n(j), p * m, l(j), 0)
                 : std::min((n(j) - 1) * busy(l(j), h * m),
                            halving_latency(log2_ceil(n(j)), h * m * (1 << log2_ceil(n(j))), l(j)) +
                                (n(j) - 1) * h * m * l(j).loaded());
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
          t += (leaders - 1) * busy(l(d), n(0) * n(0) * m);
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
  if (config.parts.size() == 2) {  // allreduce composed of two collectives
    if (config.composition == Config::Composition::kReduceScatterAllgather) {
      const std::int64_t block = bytes / std::max(model.ranks, 1);  // per rank, as theirs count
      return predict(Collective::kReduceScatterBlock, config.parts[0], model, block) +
             predict(Collective::kAllgather, config.parts[1], model, block);
    }
    return predict(Collective::kReduce, config.parts[0], model, bytes) +
           predict(Collective::kBcast, config.parts[1], model, bytes);
  }
  const double m = c == Collective::kBarrier ? 0 : static_cast<double>(bytes);
  // The flat costs below are the best of the textbook algorithms: a flat
  // configuration is priced as native (the trials tell them apart).
  if (config.flat != Algorithm::kNative) return native_cost(c, model, m);
  return config.hierarchical ? hierarchical_cost(c, config, model, m) : native_cost(c, model, m);
}

std::vector<std::pair<double, Config>> rank_hierarchical(Collective c, const Model& model,
                                                         std::int64_t bytes) {
  std::vector<std::pair<double, Config>> ranked;
  for (const Config& config : candidates(c, model.depth(), bytes, model.pipelines)) {
    if (config.hierarchical) ranked.emplace_back(predict(c, config, model, bytes), config);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  return ranked;
}

std::vector<Config> worth_trying(const std::vector<std::pair<double, Config>>& ranked, int depth,
                                 std::size_t best, double within) {
  std::vector<Config> tried;
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    if (i < best) {
      tried.push_back(ranked[i].second);
      continue;
    }
    if (ranked[i].first > within * ranked.front().first) break;
    const Algorithm a = ranked[i].second.level(depth);
    const auto same_top = [&](const Config& t) { return t.level(depth) == a; };
    if (a != Algorithm::kNative && std::none_of(tried.begin(), tried.end(), same_top)) {
      tried.push_back(ranked[i].second);
    }
  }
  return tried;
}

Choice choose(Collective c, const Model& model, std::int64_t bytes, double margin,
              bool force_hierarchical) {
  Choice best;
  best.native_predicted = best.predicted = predict(c, Config{}, model, bytes);
  const auto ranked = rank_hierarchical(c, model, bytes);
  if (ranked.empty()) return best;
  const auto& [predicted, winner] = ranked.front();
  if (force_hierarchical || predicted < best.native_predicted * (1 - margin)) {
    best.config = winner;
    best.predicted = predicted;
  }
  return best;
}

}  // namespace rankshape::coll
