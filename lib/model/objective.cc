#include "lib/model/objective.h"

#include <algorithm>
#include <stdexcept>

#include "lib/model/objective_state.h"

namespace rankshape {
namespace {

void check_spec(const ObjectiveSpec& spec, const Grid& grid) {
  if (spec.link_load && spec.aggregate == Aggregate::kSumOfAllFibres) {
    throw std::invalid_argument("+links needs sum-max or thesis-max, not total");
  }
  if (spec.links) {
    if (!spec.link_load) throw std::invalid_argument("link levels given without +links");
    for (const LinkLevel& level : *spec.links) check_level(level, grid.size());
  }
  if (spec.is_graph()) {
    if (spec.aggregate != Aggregate::kGraphCost && spec.aggregate != Aggregate::kSumOfAllFibres) {
      throw std::invalid_argument("a graph's objective is cost or total");
    }
    if (!spec.graph) {
      throw std::invalid_argument("the graph pattern needs a traffic graph (a traffic file)");
    }
    if (spec.graph->vertices() != grid.size()) {
      throw std::invalid_argument("the traffic graph has " +
                                  std::to_string(spec.graph->vertices()) + " ranks, the job " +
                                  std::to_string(grid.size()));
    }
    if (spec.stencil || !spec.dimension_weights.empty()) {
      throw std::invalid_argument("a stencil or dimension weights given with the graph pattern");
    }
    return;
  }
  if (spec.graph)
    throw std::invalid_argument("a traffic graph given with the " + spec.pattern.name() +
                                " pattern");
  if (spec.aggregate == Aggregate::kGraphCost) {
    throw std::invalid_argument("the cost objective is for traffic graphs");
  }
  if (spec.is_stencil()) {
    if (spec.aggregate != Aggregate::kStep && spec.aggregate != Aggregate::kSumOfAllFibres) {
      throw std::invalid_argument("a stencil's objective is step or total");
    }
    if (!spec.dimension_weights.empty()) {
      throw std::invalid_argument(
          "dimension weights are for fibres; a stencil weighs its neighbours itself");
    }
    spec.stencil_on(grid);  // throws if it does not fit
    return;
  }
  if (spec.aggregate == Aggregate::kStep) {
    throw std::invalid_argument("the step objective is for stencils, not fibres");
  }
  if (spec.stencil) throw std::invalid_argument("a stencil given with the fibres pattern");
  if (spec.dimension_weights.empty()) return;
  if (static_cast<int>(spec.dimension_weights.size()) != grid.ndims()) {
    throw std::invalid_argument("objective has " + std::to_string(spec.dimension_weights.size()) +
                                " dimension weights for a grid of " + std::to_string(grid.ndims()) +
                                " dimensions");
  }
  for (double w : spec.dimension_weights) {
    if (!(w >= 0) || w > 1e300)
      throw std::invalid_argument("dimension weights must be finite and >= 0");
  }
}

void check_sizes(const Costs& costs, const Grid& grid, const Labelling& labelling) {
  if (costs.size() != grid.size() || labelling.size() != grid.size()) {
    throw std::invalid_argument("size mismatch: costs for " + std::to_string(costs.size()) +
                                " ranks, grid " + grid.to_string() + " of " +
                                std::to_string(grid.size()) + " positions, labelling of " +
                                std::to_string(labelling.size()) + " ranks");
  }
}

}  // namespace

ObjectiveSpec ObjectiveSpec::parse(std::string_view full) {
  ObjectiveSpec spec;  // the fibres pattern
  std::string_view text = full;
  constexpr std::string_view kLinks = "+links";
  if (text.size() >= kLinks.size() && text.substr(text.size() - kLinks.size()) == kLinks) {
    spec.link_load = true;
    text.remove_suffix(kLinks.size());
  }
  const std::size_t colon = text.find(':');
  const std::string_view aggregate = text.substr(0, colon);
  const std::string_view fibre =
      colon == std::string_view::npos ? std::string_view("pairs") : text.substr(colon + 1);
  if (aggregate == "sum-max") {
    spec.aggregate = Aggregate::kSumOfDimensionMax;
  } else if (aggregate == "thesis-max") {
    spec.aggregate = Aggregate::kMaxOverAllFibres;
  } else if (aggregate == "total") {
    spec.aggregate = Aggregate::kSumOfAllFibres;
  } else {
    throw std::invalid_argument("unknown objective '" + std::string(full) +
                                "': expected sum-max, thesis-max or total, optionally "
                                "followed by :pairs or :max-pair, then optionally +links");
  }
  if (fibre == "pairs") {
    spec.fibre = FibreCost::kSumOfPairs;
  } else if (fibre == "max-pair") {
    spec.fibre = FibreCost::kMaxPair;
  } else {
    throw std::invalid_argument("unknown fibre cost '" + std::string(fibre) + "' in objective '" +
                                std::string(full) + "': expected pairs or max-pair");
  }
  if (spec.link_load && spec.aggregate == Aggregate::kSumOfAllFibres) {
    throw std::invalid_argument("objective '" + std::string(full) +
                                "': +links needs sum-max or thesis-max, not total");
  }
  return spec;
}

std::string ObjectiveSpec::name() const {
  if (is_stencil()) return aggregate == Aggregate::kStep ? "step" : "total";
  if (is_graph()) return aggregate == Aggregate::kGraphCost ? "cost" : "total";
  std::string s;
  switch (aggregate) {
    case Aggregate::kSumOfDimensionMax:
      s = "sum-max";
      break;
    case Aggregate::kMaxOverAllFibres:
      s = "thesis-max";
      break;
    case Aggregate::kSumOfAllFibres:
    case Aggregate::kStep:  // not fibres objectives: check_spec() refuses them
    case Aggregate::kGraphCost:
      s = "total";
      break;
  }
  return s + (fibre == FibreCost::kSumOfPairs ? ":pairs" : ":max-pair") +
         (link_load ? "+links" : "");
}

ObjectiveSpec ObjectiveSpec::with_links(const Costs& costs,
                                        const std::vector<std::vector<int>>& known) const {
  ObjectiveSpec spec = *this;
  if (spec.link_load && !spec.links) {
    spec.links = std::make_shared<const std::vector<LinkLevel>>(link_levels(costs, known));
  }
  return spec;
}

ObjectiveSpec ObjectiveSpec::pairs_only() const {
  ObjectiveSpec spec = *this;
  spec.link_load = false;
  spec.links.reset();
  return spec;
}

ObjectiveSpec ObjectiveSpec::parse(std::string_view text, const Pattern& pattern) {
  if (pattern.is_graph()) {
    ObjectiveSpec spec;
    spec.pattern = pattern;
    if (text.empty() || text == "cost") {
      spec.aggregate = Aggregate::kGraphCost;
      spec.link_load = true;  // the shared links are part of the cost
    } else if (text == "total") {
      spec.aggregate = Aggregate::kSumOfAllFibres;
    } else {
      throw std::invalid_argument("objective '" + std::string(text) +
                                  "' does not apply to pattern graph: expected cost or total");
    }
    return spec;
  }
  if (!pattern.is_stencil()) {
    ObjectiveSpec spec = parse(text.empty() ? std::string_view("sum-max") : text);
    spec.pattern = pattern;
    return spec;
  }
  ObjectiveSpec spec;
  spec.pattern = pattern;
  if (text.empty() || text == "step") {
    spec.aggregate = Aggregate::kStep;
    spec.link_load = true;  // the shared links are part of a step
  } else if (text == "total") {
    spec.aggregate = Aggregate::kSumOfAllFibres;
  } else {
    throw std::invalid_argument("objective '" + std::string(text) + "' does not apply to pattern " +
                                pattern.name() + ": expected step or total");
  }
  return spec;
}

std::shared_ptr<const Stencil> ObjectiveSpec::stencil_on(const Grid& grid) const {
  if (stencil) {
    if (stencil->grid().dims() != grid.dims()) {
      throw std::invalid_argument("the objective's stencil is for grid " +
                                  stencil->grid().to_string() + ", not " + grid.to_string());
    }
    return stencil;
  }
  if (!is_stencil()) throw std::invalid_argument("the fibres pattern has no stencil");
  return std::make_shared<const Stencil>(pattern.stencil, grid);
}

Evaluation evaluate(const Costs& costs, const Grid& grid, const Labelling& labelling,
                    const ObjectiveSpec& spec) {
  check_sizes(costs, grid, labelling);
  check_spec(spec, grid);
  const ObjectiveSpec with = spec.with_links(costs, {});
  if (spec.is_graph()) return detail::evaluate_graph(costs, labelling, with);
  return spec.is_stencil() ? detail::evaluate_stencil(costs, grid, labelling, with)
                           : detail::evaluate_fibres(costs, grid, labelling, with);
}

IncrementalObjective::IncrementalObjective(const Costs& costs, Grid grid, Labelling labelling,
                                           ObjectiveSpec spec)
    : costs_(costs), grid_(std::move(grid)), spec_(spec.with_links(costs, {})) {
  check_sizes(costs_, grid_, labelling);
  check_spec(spec_, grid_);
  if (spec_.is_stencil() && !spec_.stencil) spec_.stencil = spec_.stencil_on(grid_);
  if (spec_.is_graph()) {
    state_ = detail::make_graph_state(costs_, std::move(labelling), spec_);
  } else if (spec_.is_stencil()) {
    state_ = detail::make_stencil_state(costs_, grid_, std::move(labelling), spec_);
  } else {
    state_ = detail::make_fibre_state(costs_, grid_, std::move(labelling), spec_);
  }
}

IncrementalObjective::~IncrementalObjective() = default;
IncrementalObjective::IncrementalObjective(IncrementalObjective&&) noexcept = default;

ObjectiveValue IncrementalObjective::value() const { return state_->value(); }
const Labelling& IncrementalObjective::labelling() const { return state_->labelling(); }
Evaluation IncrementalObjective::evaluation() const { return state_->evaluation(); }
bool IncrementalObjective::can_improve() const { return state_->can_improve(); }

SearchFocus IncrementalObjective::focus(std::int64_t round, SplitMix64& rng) const {
  return state_->focus(round, rng);
}

NewRank IncrementalObjective::partner(const SearchFocus& focus, SplitMix64& rng) const {
  return state_->partner(focus, rng);
}

bool IncrementalObjective::pointless(const SearchFocus& focus, NewRank other) const {
  return state_->pointless(focus, other);
}

void IncrementalObjective::check_positions(std::initializer_list<NewRank> positions) const {
  for (const NewRank n : positions) {
    if (n.value() < 0 || n.value() >= grid_.size()) {
      throw std::out_of_range("position " + std::to_string(n.value()) + " outside grid " +
                              grid_.to_string());
    }
  }
}

namespace {

detail::Move swap_move(const Labelling& l, NewRank a, NewRank b) {
  detail::Move m;
  m.n = 2;
  m.pos = {a, b, NewRank()};
  m.arriving = {l.old_of(b), l.old_of(a), OldRank()};
  return m;
}

detail::Move cycle_move(const Labelling& l, NewRank a, NewRank b, NewRank c) {
  detail::Move m;
  m.n = 3;
  m.pos = {a, b, c};
  m.arriving = {l.old_of(c), l.old_of(a), l.old_of(b)};
  return m;
}

void check_distinct(NewRank a, NewRank b, NewRank c) {
  if (a == b || b == c || a == c) {
    throw std::invalid_argument("a 3-cycle needs three distinct positions");
  }
}

}  // namespace

ObjectiveValue IncrementalObjective::value_after_swap(NewRank a, NewRank b) const {
  check_positions({a, b});
  if (a == b) return value();
  return state_->value_after(swap_move(labelling(), a, b));
}

ObjectiveValue IncrementalObjective::value_after_cycle(NewRank a, NewRank b, NewRank c) const {
  check_positions({a, b, c});
  check_distinct(a, b, c);
  return state_->value_after(cycle_move(labelling(), a, b, c));
}

void IncrementalObjective::apply_swap(NewRank a, NewRank b) {
  check_positions({a, b});
  if (a != b) state_->apply(swap_move(labelling(), a, b));
}

void IncrementalObjective::apply_cycle(NewRank a, NewRank b, NewRank c) {
  check_positions({a, b, c});
  check_distinct(a, b, c);
  state_->apply(cycle_move(labelling(), a, b, c));
}

}  // namespace rankshape
