#include "lib/dropin/settings.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lib/io/atomic_file.h"
#include "lib/mpi/error.h"
#include "lib/relabel/relabel.h"

namespace rankshape::dropin {
namespace {

std::uint64_t parse_seed(const std::string& text) {
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = digits ? std::strtoull(text.c_str(), &end, 10) : 0;
  if (!digits || errno == ERANGE || *end != '\0') {
    throw std::invalid_argument(quoted("RANKSHAPE_SEED", text) +
                                ": expected a non-negative integer below 2^64");
  }
  return value;
}

double parse_time_limit(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE ||
      !std::isfinite(value) || value < 0) {
    throw std::invalid_argument(quoted("RANKSHAPE_TIME_LIMIT", text) +
                                ": expected a number of seconds >= 0");
  }
  return value;
}

}  // namespace

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string quoted(const char* name, const std::string& value) {
  return std::string(name) + "='" + value + "'";
}

Settings read_common_settings() {
  Settings s;
  const std::string costs = env("RANKSHAPE_COSTS");
  const std::string source = env("RANKSHAPE_SOURCE");
  if (!source.empty()) {
    CostSource parsed;
    try {
      parsed = parse_cost_source(source);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(quoted("RANKSHAPE_SOURCE", source) +
                                  ": unknown cost source; expected auto, measure, "
                                  "hierarchical, model or file (with RANKSHAPE_COSTS)");
    }
    if (parsed == CostSource::kMatrix) {
      throw std::invalid_argument(quoted("RANKSHAPE_SOURCE", source) +
                                  ": a matrix cannot come from the environment; use "
                                  "RANKSHAPE_COSTS=FILE");
    }
    if (parsed == CostSource::kFile && costs.empty()) {
      throw std::invalid_argument(quoted("RANKSHAPE_SOURCE", source) +
                                  " needs RANKSHAPE_COSTS=FILE");
    }
    if (parsed != CostSource::kFile && !costs.empty()) {
      throw std::invalid_argument(quoted("RANKSHAPE_SOURCE", source) + " and " +
                                  quoted("RANKSHAPE_COSTS", costs) +
                                  " conflict: a cost file is source file");
    }
    s.options.source = parsed;
  }
  if (!costs.empty()) {
    s.options.source = CostSource::kFile;
    s.options.cost_file = costs;
  }
  const std::string algorithm = env("RANKSHAPE_ALGORITHM");
  if (!algorithm.empty()) {
    const std::vector<std::string>& names = relabel_algorithms();
    if (std::find(names.begin(), names.end(), algorithm) == names.end()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      throw std::invalid_argument(quoted("RANKSHAPE_ALGORITHM", algorithm) +
                                  ": unknown algorithm; expected one of " + list);
    }
    s.options.algorithm = algorithm;
  }
  const std::string seed = env("RANKSHAPE_SEED");
  if (!seed.empty()) s.options.seed = parse_seed(seed);
  const std::string time_limit = env("RANKSHAPE_TIME_LIMIT");
  if (!time_limit.empty()) s.options.time_limit = parse_time_limit(time_limit);
  s.report_path = env("RANKSHAPE_REPORT");
  return s;
}

void fail_everywhere(const mpi::Communicator& comm, const std::string& prefix,
                     const std::string& message, int code) {
  if (comm.rank() == 0) {
    std::fprintf(stderr, "%s%s\n", prefix.c_str(), message.c_str());
    std::fflush(stderr);
  }
  mpi::check(MPI_Barrier(comm.get()), "MPI_Barrier");
  throw AgreedError(message, code);
}

void agree(const mpi::Communicator& comm, const std::string& prefix, const std::string& error,
           int code) {
  try {
    agree_on_errors(comm.get(), error);
  } catch (const std::invalid_argument& e) {
    fail_everywhere(comm, prefix, e.what(), code);
  }
}

int fail(MPI_Comm old, int code) {
  PMPI_Comm_call_errhandler(old, code);
  return code;
}

std::string rank_of(MPI_Comm old) {
  int rank = 0;
  if (old == MPI_COMM_NULL || PMPI_Comm_rank(old, &rank) != MPI_SUCCESS) return "";
  return "rank " + std::to_string(rank) + ": ";
}

void inherit_errhandler(MPI_Comm old, MPI_Comm* created) {
  if (*created == MPI_COMM_NULL) return;
  MPI_Errhandler handler;
  int set = PMPI_Comm_get_errhandler(old, &handler);
  if (set == MPI_SUCCESS) {
    set = PMPI_Comm_set_errhandler(*created, handler);
    PMPI_Errhandler_free(&handler);
  }
  if (set != MPI_SUCCESS) {
    PMPI_Comm_free(created);  // not handed out half-configured
    *created = MPI_COMM_NULL;
    mpi::check(set, "MPI_Comm_set_errhandler");
  }
}

nlohmann::json report_json(const std::string& tool, const Settings& s, const ShapedComm& shaped) {
  const ShapeReport& r = shaped.report();
  std::vector<int> perm;
  const int p = shaped.grid().size();
  perm.reserve(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) perm.push_back(shaped.old_of(NewRank(i)).value());
  nlohmann::json j = {
      {"tool", tool},
      {"p", p},
      {"cost_source", r.cost_source},
      {"algorithm", s.options.algorithm},
      {"algorithm_run", r.algorithm},
      {"seed", s.options.seed},
      {"winner", r.winner},
      {"winner_seed", r.winner_seed},
      {"time_limit", s.options.time_limit},
      {"time_limited", r.time_limited},
      {"pattern", s.options.objective.pattern.name()},
      {"objective", s.options.objective.name()},
      {"objective_before", r.before.value.primary},
      {"objective_after", r.after.value.primary},
      {"total_before", r.before.value.total},
      {"total_after", r.after.value.total},
      {"measure_seconds", r.measure_seconds},
      {"relabel_seconds", r.relabel_seconds},
      // perm[i] = rank in the old communicator of new rank i.
      {"perm", perm},
  };
  if (r.bound) j["lower_bound"] = r.bound->primary;
  if (s.options.source == CostSource::kFile) j["cost_file"] = s.options.cost_file;
  return j;
}

void write_report(const mpi::Communicator& comm, const std::string& prefix, const Settings& s,
                  const nlohmann::json& j) {
  std::string error;
  if (comm.rank() == 0 && !s.report_path.empty()) {
    try {
      write_file_atomically(s.report_path, [&](std::ostream& out) { out << j.dump(2) << "\n"; });
    } catch (const std::exception& e) {
      error = std::string("RANKSHAPE_REPORT: ") + e.what();
    }
  }
  agree(comm, prefix, error, MPI_ERR_OTHER);
}

}  // namespace rankshape::dropin
