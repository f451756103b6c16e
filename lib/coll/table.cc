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

// An integer in [min, max]: nlohmann's get<int>() of 1e300 or 2.5 would
// convert silently (or with undefined behaviour).
std::int64_t integer(const json& j, std::int64_t min, std::int64_t max, const std::string& what,
                     const std::string& origin) {
  bool ok = false;
  std::int64_t v = 0;
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    ok = u <= static_cast<std::uint64_t>(max);
    v = ok ? static_cast<std::int64_t>(u) : 0;
  } else if (j.is_number_integer()) {
    v = j.get<std::int64_t>();
    ok = true;
  }
  if (!ok || v < min || v > max) {
    throw InputError(origin, 0, 0,
                     what + " must be a whole number from " + std::to_string(min) + " to " +
                         std::to_string(max) + ", got " + j.dump());
  }
  return v;
}

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
  } catch (const json::exception& e) {  // also out_of_range: a number like 1e400
    throw fail(std::string("not JSON: ") + e.what());
  }
  const auto header = [&](const char* key) { return doc.is_object() ? doc.find(key) : doc.end(); };
  const auto format = header("format");
  if (format == doc.end() || !format->is_string() || *format != "rankshape-coll-table") {
    throw fail("not a rankshape tuning table (\"format\": \"rankshape-coll-table\" missing)");
  }
  const auto version = header("version");
  if (version == doc.end() || !version->is_number() || *version != 1) {
    throw fail("unsupported tuning table version (this program reads version 1)");
  }
  // A bad value is refused here, not left to mislead every later choice.
  const auto sizes_of = [&](const json& j, const std::string& what) {
    const json& list = j.at("sizes");
    if (!list.is_array() || list.empty()) throw fail(what + " needs a list of level sizes");
    std::vector<int> sizes;
    std::int64_t ranks = 1;
    for (const json& s : list) {
      sizes.push_back(static_cast<int>(
          integer(s, 1, std::numeric_limits<int>::max(), what + "'s level size", origin)));
      ranks *= sizes.back();
      if (ranks > std::numeric_limits<int>::max()) throw fail(what + " of more than 2^31 ranks");
    }
    return sizes;
  };
  const auto cost = [&](double x, const char* what) {
    if (!std::isfinite(x) || x < 0) {
      throw fail(std::string(what) + " is negative or not finite: " + std::to_string(x));
    }
    return x;
  };
  TuningTable table;
  try {
    for (const json& m : doc.at("models")) {
      Model model;
      model.sizes = sizes_of(m, "a model");
      const auto alpha = m.at("alpha").get<std::vector<double>>();
      const auto beta = m.at("beta").get<std::vector<double>>();
      // Optional (tables before them): the same as beta, and as alpha.
      const auto loaded = m.value("beta_loaded", beta);
      const auto alpha_large = m.value("alpha_large", alpha);
      if (alpha.size() != model.sizes.size() || beta.size() != model.sizes.size() ||
          loaded.size() != model.sizes.size() || alpha_large.size() != model.sizes.size()) {
        throw fail("a model needs one alpha, beta, beta_loaded and alpha_large per level");
      }
      for (std::size_t j = 0; j < alpha.size(); ++j) {
        model.links.push_back({cost(alpha[j], "alpha"), cost(beta[j], "beta"),
                               cost(loaded[j], "beta_loaded"),
                               cost(alpha_large[j], "alpha_large")});
      }
      model.gamma = cost(m.at("gamma").get<double>(), "gamma");
      model.ranks = 1;
      for (int s : model.sizes) model.ranks *= s;
      table.models.push_back(std::move(model));
    }
    for (const json& e : doc.at("entries")) {
      TableEntry entry;
      const std::string name = e.at("collective").get<std::string>();
      const auto c = collective_named(name);
      if (!c) throw fail("unknown collective '" + name + "'");
      entry.collective = *c;
      entry.sizes = sizes_of(e, "an entry");
      entry.bytes = integer(e.at("bytes"), 0, std::numeric_limits<std::int64_t>::max(),
                            "an entry's bytes", origin);
      const std::string config = e.at("config").get<std::string>();
      const auto parsed = Config::parse(config);
      if (!parsed) throw fail("bad configuration '" + config + "'");
      bool levels_fit = parsed->levels.empty() || parsed->levels.size() == entry.sizes.size();
      for (const Config& part : parsed->parts) {
        levels_fit =
            levels_fit && (part.levels.empty() || part.levels.size() == entry.sizes.size());
      }
      if (!levels_fit) throw fail("configuration '" + config + "' does not fit its sizes");
      if (!applies(*parsed, entry.collective)) {
        throw fail("configuration '" + config + "' does not apply to " + name);
      }
      entry.config = *parsed;
      entry.measured = cost(e.value("measured", 0.0), "measured");
      entry.predicted = cost(e.value("predicted", 0.0), "predicted");
      entry.native = cost(e.value("native", 0.0), "native");
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
    std::vector<double> alpha, beta, loaded, alpha_large;
    for (const LinkCost& l : m.links) {
      alpha.push_back(l.alpha);
      beta.push_back(l.beta);
      loaded.push_back(l.loaded());
      alpha_large.push_back(l.alpha_at(kLargeMessageBytes));
    }
    doc["models"].push_back({{"sizes", m.sizes},
                             {"alpha", alpha},
                             {"beta", beta},
                             {"beta_loaded", loaded},
                             {"alpha_large", alpha_large},
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
