// The tuning table: for each collective, machine shape (members per level)
// and message size, the configuration that won when coll_tune measured the
// candidates, with the times seen; and the per-level costs fitted there, so
// that later runs need not measure them again. Stored as JSON:
//   {"format": "rankshape-coll-table", "version": 1,
//    "models": [{"sizes": [4, 8], "alpha": [..], "beta": [..], "gamma": g}],
//    "entries": [{"collective": "bcast", "sizes": [4, 8], "bytes": 65536,
//                 "config": "hierarchical segment=16384", "measured": s,
//                 "predicted": s, "native": s}]}
#ifndef RANKSHAPE_LIB_COLL_TABLE_H_
#define RANKSHAPE_LIB_COLL_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/coll/config.h"
#include "lib/coll/model.h"

namespace rankshape::coll {

struct TableEntry {
  Collective collective = Collective::kBcast;
  std::vector<int> sizes;
  std::int64_t bytes = 0;
  Config config;
  double measured = 0;   // seconds, the winner
  double predicted = 0;  // seconds, the model's prediction for the winner
  double native = 0;     // seconds, native measured
};

struct TuningTable {
  std::vector<Model> models;
  std::vector<TableEntry> entries;

  /// The model fitted for this shape, if any.
  std::optional<Model> model(const std::vector<int>& sizes) const;
  /// The winner of the entry for (collective, sizes) whose size is nearest
  /// to bytes on a logarithmic scale; nullopt without one.
  std::optional<Config> lookup(Collective c, const std::vector<int>& sizes,
                               std::int64_t bytes) const;
  /// Replaces entries and the model of the same keys.
  void merge(const TuningTable& other);
};

/// Throws InputError (file, problem) for unreadable files and bad content.
TuningTable read_table(const std::string& path);
TuningTable parse_table(const std::string& text, const std::string& origin);
std::string table_json(const TuningTable& table);
/// Atomically (lib/io/atomic_file.h).
void write_table(const std::string& path, const TuningTable& table);

}  // namespace rankshape::coll

#endif  // RANKSHAPE_LIB_COLL_TABLE_H_
