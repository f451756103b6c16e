#include "lib/coll/table.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "lib/io/atomic_file.h"
#include "lib/io/input_error.h"
#include "nlohmann/json.hpp"

namespace rankshape::coll {
namespace {

using nlohmann::json;

}  // namespace

std::optional<Model> TuningTable::model(const std::vector<int>& sizes) const {
  for (const Model& m : models) {
    if (m.sizes == sizes) return m;
  }
  return std::nullopt;
}

std::optional<Config> TuningTable::lookup(Collective c, const std::vector<int>& sizes,
                                          std::int64_t bytes) const {
  const TableEntry* best = nullptr;
  double distance = std::numeric_limits<double>::infinity();
  const double x = std::log2(static_cast<double>(std::max<std::int64_t>(bytes, 1)));
  for (const TableEntry& e : entries) {
    if (e.collective != c || e.sizes != sizes) continue;
    const double d =
        std::abs(std::log2(static_cast<double>(std::max<std::int64_t>(e.bytes, 1))) - x);
    if (d < distance) {
      distance = d;
      best = &e;
    }
  }
  if (!best) return std::nullopt;
  return best->config;
}

void TuningTable::merge(const TuningTable& other) {
  for (const Model& m : other.models) {
    bool replaced = false;
    for (Model& mine : models) {
      if (mine.sizes == m.sizes) {
        mine = m;
        replaced = true;
      }
    }
    if (!replaced) models.push_back(m);
  }
  for (const TableEntry& e : other.entries) {
    bool replaced = false;
    for (TableEntry& mine : entries) {
      if (mine.collective == e.collective && mine.sizes == e.sizes && mine.bytes == e.bytes) {
        mine = e;
        replaced = true;
      }
    }
    if (!replaced) entries.push_back(e);
  }
}

TuningTable parse_table(const std::string& text, const std::string& origin) {
  const auto fail = [&](const std::string& why) { return InputError(origin, 0, 0, why); };
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw fail(std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object() || doc.value("format", "") != "rankshape-coll-table") {
    throw fail("not a rankshape tuning table (\"format\": \"rankshape-coll-table\" missing)");
  }
  if (doc.value("version", 0) != 1) throw fail("unsupported tuning table version");
  TuningTable table;
  try {
    for (const json& m : doc.at("models")) {
      Model model;
      model.sizes = m.at("sizes").get<std::vector<int>>();
      const auto alpha = m.at("alpha").get<std::vector<double>>();
      const auto beta = m.at("beta").get<std::vector<double>>();
      // Optional (tables before it): the same as beta.
      const auto loaded = m.value("beta_loaded", beta);
      if (alpha.size() != model.sizes.size() || beta.size() != model.sizes.size() ||
          loaded.size() != model.sizes.size()) {
        throw fail("a model needs one alpha, beta and beta_loaded per level");
      }
      for (std::size_t j = 0; j < alpha.size(); ++j) {
        model.links.push_back({alpha[j], beta[j], loaded[j]});
      }
      model.gamma = m.at("gamma").get<double>();
      model.ranks = 1;
      for (std::size_t j = 0; j < model.sizes.size(); ++j) model.ranks *= model.sizes[j];
      table.models.push_back(std::move(model));
    }
    for (const json& e : doc.at("entries")) {
      TableEntry entry;
      const std::string name = e.at("collective").get<std::string>();
      const auto c = collective_named(name);
      if (!c) throw fail("unknown collective '" + name + "'");
      entry.collective = *c;
      entry.sizes = e.at("sizes").get<std::vector<int>>();
      entry.bytes = e.at("bytes").get<std::int64_t>();
      const std::string config = e.at("config").get<std::string>();
      const auto parsed = Config::parse(config);
      if (!parsed) throw fail("bad configuration '" + config + "'");
      const bool levels_fit = parsed->levels.empty() || parsed->levels.size() == entry.sizes.size();
      if (!levels_fit) throw fail("configuration '" + config + "' does not fit its sizes");
      entry.config = *parsed;
      entry.measured = e.value("measured", 0.0);
      entry.predicted = e.value("predicted", 0.0);
      entry.native = e.value("native", 0.0);
      table.entries.push_back(std::move(entry));
    }
  } catch (const json::exception& e) {
    throw fail(std::string("bad tuning table: ") + e.what());
  }
  return table;
}

TuningTable read_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, 0, "cannot open the tuning table");
  std::stringstream text;
  text << in.rdbuf();
  return parse_table(text.str(), path);
}

std::string table_json(const TuningTable& table) {
  json doc = {{"format", "rankshape-coll-table"}, {"version", 1}};
  doc["models"] = json::array();
  for (const Model& m : table.models) {
    std::vector<double> alpha, beta, loaded;
    for (const LinkCost& l : m.links) {
      alpha.push_back(l.alpha);
      beta.push_back(l.beta);
      loaded.push_back(l.loaded());
    }
    doc["models"].push_back({{"sizes", m.sizes},
                             {"alpha", alpha},
                             {"beta", beta},
                             {"beta_loaded", loaded},
                             {"gamma", m.gamma}});
  }
  doc["entries"] = json::array();
  for (const TableEntry& e : table.entries) {
    doc["entries"].push_back({{"collective", std::string(collective_name(e.collective))},
                              {"sizes", e.sizes},
                              {"bytes", e.bytes},
                              {"config", e.config.describe()},
                              {"measured", e.measured},
                              {"predicted", e.predicted},
                              {"native", e.native}});
  }
  return doc.dump(1) + "\n";
}

void write_table(const std::string& path, const TuningTable& table) {
  const std::string text = table_json(table);
  write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

}  // namespace rankshape::coll
