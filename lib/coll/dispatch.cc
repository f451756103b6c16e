#include "lib/coll/dispatch.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lib/coll/calibrate.h"
#include "lib/coll/collectives.h"
#include "lib/coll/config.h"
#include "lib/coll/hierarchy.h"
#include "lib/coll/model.h"
#include "lib/coll/pipeline.h"
#include "lib/coll/racks.h"
#include "lib/coll/table.h"
#include "lib/coll/workload.h"
#include "lib/mpi/error.h"

namespace rankshape::coll::dispatch {
namespace {

enum class Mode { kAuto, kHierarchical, kNative };

// Bad settings are reported once per process and make every dispatched
// call fail with MPI_ERR_ARG (so the communicator's error handler applies).
struct Settings {
  Mode mode = Mode::kAuto;
  std::string table;   // path, or empty
  std::string groups;  // RANKSHAPE_COLL_GROUPS, or empty
  bool racks = false;  // RANKSHAPE_COLL_RACKS=auto: find levels above the nodes
  // The most memory a trial may take on a rank (its buffers counted
  // twice, fastest()); beyond it the model alone chooses.
  std::int64_t trial_memory = std::int64_t{64} << 20;  // RANKSHAPE_COLL_TRIAL_MEMORY
  std::string error;
};

const Settings& settings() {
  static const Settings s = [] {
    Settings out;
    if (const char* m = std::getenv("RANKSHAPE_COLL")) {
      const std::string_view v = m;
      if (v == "auto" || v.empty()) {
        out.mode = Mode::kAuto;
      } else if (v == "hierarchical") {
        out.mode = Mode::kHierarchical;
      } else if (v == "native") {
        out.mode = Mode::kNative;
      } else {
        out.error =
            "RANKSHAPE_COLL='" + std::string(v) + "': expected auto, hierarchical or native";
      }
    }
    if (const char* t = std::getenv("RANKSHAPE_COLL_TABLE")) out.table = t;
    if (const char* g = std::getenv("RANKSHAPE_COLL_GROUPS")) out.groups = g;
    if (const char* r = std::getenv("RANKSHAPE_COLL_RACKS")) {
      const std::string_view v = r;
      if (v == "auto") {
        out.racks = true;
      } else if (v == "off" || v.empty()) {
        out.racks = false;
      } else {
        out.error = "RANKSHAPE_COLL_RACKS='" + std::string(v) + "': expected auto or off";
      }
    }
    if (const char* m = std::getenv("RANKSHAPE_COLL_TRIAL_MEMORY")) {
      const std::string_view v = m;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out.trial_memory);
      if (v.empty() || ec != std::errc() || end != v.data() + v.size() || out.trial_memory < 0) {
        out.error = "RANKSHAPE_COLL_TRIAL_MEMORY='" + std::string(v) +
                    "': expected a number of bytes (0 or more)";
      }
    }
    if (!out.error.empty()) std::fprintf(stderr, "rankshape: %s\n", out.error.c_str());
    return out;
  }();
  return s;
}

struct Key {
  Collective collective;
  std::int64_t bytes;
  bool operator==(const Key& o) const { return collective == o.collective && bytes == o.bytes; }
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    return std::hash<std::int64_t>()(k.bytes * 16 + static_cast<int>(k.collective));
  }
};

struct Decision {
  Config config;
  std::string description;
  double predicted = -1;  // seconds, model.h's predict()
};

thread_local std::vector<Trial> trials;

// Messages of up to 2^k bytes, for k = size_class: one trial each.
std::int64_t size_class(std::int64_t bytes) {
  std::int64_t k = 0;
  while (k < 62 && (std::int64_t{1} << k) < bytes) ++k;
  return k;
}

// set_trial_memory's value, or -1: the setting's.
std::atomic<std::int64_t> trial_memory_set{-1};
std::int64_t trial_memory() {
  const std::int64_t set = trial_memory_set.load();
  return set >= 0 ? set : settings().trial_memory;
}

// What a communicator's calls need, built once by its first call.
struct Context {
  std::optional<Hierarchy> hierarchy;  // empty: one node, native only
  Model model;
  TuningTable table;
  std::unordered_map<Key, Decision, KeyHash> decisions;
  // The winners of trials, keyed by collective and size_class.
  std::unordered_map<Key, Config, KeyHash> verdicts;
};

const Config& decided(MPI_Comm comm, Context& context, Collective c, std::int64_t bytes);

// Times native, the hierarchical configurations worth_trying() (model.h)
// picks from the model's ranking, and the textbook flat
// algorithm for c with `bytes` on comm (median of 3 after a warm-up, 1 under SMPI, the
// slowest rank's), and for allreduce also this
// communicator's own reduce then bcast of that size and its own
// reduce_scatter_block then allgather of the message's blocks (decided
// first, by their own trials if need be), and returns the fastest; native when none beats it. The
// same on every rank: the times are agreed. Empty on every rank when any rank cannot hold the
// scratch buffers (over its trial_memory(), or building them fails): a rank alone leaving would
// hang the others in the first run.
std::optional<Config> fastest(MPI_Comm comm, Context& context, Collective c, std::int64_t bytes) {
  const Hierarchy& h = *context.hierarchy;
  const auto ranked = rank_hierarchical(c, context.model, bytes);
  std::vector<Config> tried = {Config{}};
  for (Config& config : worth_trying(ranked, context.model.depth())) {
    tried.push_back(std::move(config));
  }
  if (auto textbook = textbook_flat(c, bytes, Workload::count(c, bytes), h.size())) {
    tried.push_back(*textbook);
  }
  if (c == Collective::kAllreduce) {
    // Träff, Gropp and Thakur: an allreduce no slower than a reduce, then
    // a bcast. Decided before this trial's buffers exist, so that their
    // trials' buffers never add to them. Copies: deciding the bcast may
    // clear the decisions.
    Config composed;
    composed.hierarchical = true;
    composed.parts.push_back(decided(comm, context, Collective::kReduce, bytes));
    composed.parts.push_back(decided(comm, context, Collective::kBcast, bytes));
    tried.push_back(std::move(composed));
    // And no slower than a reduce_scatter_block, then an allgather, of a
    // block per rank: tried where every rank gets at least an element (the
    // trial's are ints), and where they do the remainder goes to the MPI
    // library's allreduce (collectives.cc).
    const std::int64_t block = bytes / h.size();
    if (block >= static_cast<std::int64_t>(sizeof(int))) {
      Config blocks;
      blocks.hierarchical = true;
      blocks.composition = Config::Composition::kReduceScatterAllgather;
      blocks.parts.push_back(decided(comm, context, Collective::kReduceScatterBlock, block));
      blocks.parts.push_back(decided(comm, context, Collective::kAllgather, block));
      tried.push_back(std::move(blocks));
    }
  }
  // The buffers count twice: the algorithms' own scratch is about as much
  // again (Rabenseifner's reduce holds two copies of the message).
  // Workload counts in int.
  std::optional<Workload> work;
  const std::int64_t budget = trial_memory();
  if (budget > 0 && 2 * Workload::footprint(c, bytes, h.size()) <= budget &&
      bytes <= std::numeric_limits<int>::max()) {
    try {
      work.emplace(c, bytes, comm);
    } catch (const std::exception& e) {
      const std::string_view what = collective_name(c);
      std::fprintf(stderr, "rankshape: no trial of %.*s with %lld bytes: %s\n",
                   static_cast<int>(what.size()), what.data(), static_cast<long long>(bytes),
                   e.what());
    }
  }
  int ready = work ? 1 : 0;
  mpi::check(PMPI_Allreduce(MPI_IN_PLACE, &ready, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (!ready) return std::nullopt;
  // Simulated time repeats exactly from run to run (SMPI: one clock, every
  // run started together on an idle network), so one run says what three
  // would: with the warm-up, half the simulation.
  const int repetitions = StartTogether::clock_shared() ? 1 : 3;
  std::vector<Trial> timed;  // theirs, when the parts made trials, are replaced
  Config best;
  double best_seconds = 0;
  for (const Config& config : tried) {
    const double t = time_collective(comm, 1, repetitions, [&] {
      if (config.hierarchical) {
        work->run_hierarchical(h, config);
      } else {
        work->run_native();
      }
    });
    timed.push_back({config.describe(), t, predict(c, config, context.model, bytes)});
    if (timed.size() == 1 || t < best_seconds) {
      best = config;
      best_seconds = t;
    }
  }
  trials = std::move(timed);
  return best;
}

// Contexts alive; freed with their communicator, or at MPI_Finalize (the
// MPI_COMM_SELF attribute is deleted first) while MPI can still free
// their communicators.
std::set<Context*>& alive() {
  static std::set<Context*> contexts;
  return contexts;
}

int delete_context(MPI_Comm, int, void* attribute, void*) {
  auto* context = static_cast<Context*>(attribute);
  if (alive().erase(context) > 0) delete context;
  return MPI_SUCCESS;
}

// The two attribute keys: contexts on their communicators, and the
// MPI_COMM_SELF attribute whose deletion at MPI_Finalize frees what is left.
struct Keyvals {
  int context = MPI_KEYVAL_INVALID;
  int finalize = MPI_KEYVAL_INVALID;
};
Keyvals& keyvals() {
  static Keyvals k;
  return k;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still
// works: free every context left (their communicators too) and both keys.
// Freeing a key whose attributes are still set is allowed; MPI releases it
// once they are gone.
int delete_all(MPI_Comm, int, void*, void*) {
  for (Context* c : alive()) delete c;
  alive().clear();
  Keyvals& k = keyvals();
  int status = MPI_Comm_free_keyval(&k.context);
  if (status == MPI_SUCCESS) status = MPI_Comm_free_keyval(&k.finalize);
  return status;
}

int context_keyval() {
  Keyvals& k = keyvals();
  static const bool created = [&k] {  // once, even with threads
    mpi::check(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_context, &k.context, nullptr),
               "MPI_Comm_create_keyval");
    mpi::check(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_all, &k.finalize, nullptr),
               "MPI_Comm_create_keyval");
    mpi::check(MPI_Comm_set_attr(MPI_COMM_SELF, k.finalize, nullptr), "MPI_Comm_set_attr");
    return true;
  }();
  (void)created;
  return k.context;
}

Context* find(MPI_Comm comm) {
  void* attribute = nullptr;
  int found = 0;
  mpi::check(MPI_Comm_get_attr(comm, context_keyval(), &attribute, &found), "MPI_Comm_get_attr");
  return found ? static_cast<Context*>(attribute) : nullptr;
}

// Rank 0 reads the table; everyone parses the same text. A table that
// cannot be read fails the call on every rank.
TuningTable shared_table(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  std::string text, error;
  if (rank == 0) {
    std::ifstream in(path);
    if (!in) {
      error = "cannot open the tuning table";
    } else {
      std::stringstream s;
      s << in.rdbuf();
      text = s.str();
    }
  }
  long long length[2] = {static_cast<long long>(text.size()), error.empty() ? 0 : 1};
  mpi::check(PMPI_Bcast(length, 2, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
  if (length[1] != 0) {
    throw std::invalid_argument("RANKSHAPE_COLL_TABLE=" + path + ": " +
                                (rank == 0 ? error : "rank 0 cannot read it"));
  }
  text.resize(static_cast<std::size_t>(length[0]));
  mpi::check(PMPI_Bcast(text.data(), static_cast<int>(length[0]), MPI_CHAR, 0, comm), "MPI_Bcast");
  return parse_table(text, path);
}

std::unique_ptr<Context> build(MPI_Comm comm, std::vector<std::vector<int>> groups) {
  auto context = std::make_unique<Context>();
  const Settings& s = settings();
  int p = 0;
  mpi::check(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  if (groups.empty() && !s.groups.empty()) {
    try {
      groups = Hierarchy::pretend_groups(s.groups, p);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("RANKSHAPE_COLL_GROUPS=") + e.what());
    }
  }
  if (groups.empty()) {
    groups = Hierarchy::machine_groups(comm);
    // Racks are measured only above the machine's own nodes: pretended or
    // given groups are meant as they are.
    if (s.racks) groups = with_found_racks(comm, std::move(groups));
  }
  Hierarchy h(comm, std::move(groups));
  if (!h.useful()) return context;
  if (!s.table.empty()) {
    TuningTable all = shared_table(comm, s.table);
    const std::vector<int> sizes = level_sizes(h);
    for (const TableEntry& e : all.entries) {
      if (e.sizes == sizes) context->table.entries.push_back(e);
    }
    if (auto m = all.model(sizes)) {
      context->model = *m;
      context->model.ranks = h.size();
      context->model.contiguous = h.ordered();
      context->model.pipelines = can_pipeline();
      context->table.models.push_back(*m);
    }
  }
  if (context->table.models.empty()) context->model = calibrate(h);
  context->hierarchy.emplace(std::move(h));
  return context;
}

Context* attach(MPI_Comm comm, std::unique_ptr<Context> context) {
  mpi::check(MPI_Comm_set_attr(comm, context_keyval(), context.get()), "MPI_Comm_set_attr");
  alive().insert(context.get());
  return context.release();
}

// Marks the thread as inside a dispatched call.
thread_local bool inside = false;
struct Inside {
  Inside() { inside = true; }
  ~Inside() { inside = false; }
};

thread_local std::string last = "native";
thread_local double last_predicted_seconds = -1;  // last_predicted()
const std::string kNative = "native";

bool commutative(MPI_Op op) {
  int yes = 1;
  mpi::check(MPI_Op_commutative(op, &yes), "MPI_Op_commutative");
  return yes != 0;
}

// 0 for a bad type: the native call, which this size then picks, reports
// it.
std::int64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  if (MPI_Type_size(type, &size) != MPI_SUCCESS) return 0;
  return static_cast<std::int64_t>(count) * size;
}

// This communicator's choice for c with `bytes` (its context has a
// hierarchy), made at the first call of that size and kept. Collective
// when it makes a trial.
const Decision& decision(MPI_Comm comm, Context& context, Collective c, std::int64_t bytes) {
  const Settings& s = settings();
  auto it = context.decisions.find(Key{c, bytes});
  if (it == context.decisions.end()) {
    // Decided before it is kept: a call that throws (an MPI error in a
    // trial) leaves nothing half-decided behind.
    std::optional<Config> chosen;
    if (s.mode == Mode::kAuto)
      chosen = context.table.lookup(c, level_sizes(*context.hierarchy), bytes);
    // No trial for 0 bytes (nothing to time, and class 0 holds 1 byte
    // too) but for barrier, nor for a size MPI_Type_size could not give.
    const bool sized = bytes > 0 || c == Collective::kBarrier;
    if (!chosen && s.mode == Mode::kAuto && sized) {
      // Once per collective and size class; every rank gets here in the
      // same call (MPI orders collectives), so all can time them together.
      const Key key{c, size_class(bytes)};
      auto verdict = context.verdicts.find(key);
      if (verdict == context.verdicts.end()) {
        if (auto best = fastest(comm, context, c, bytes)) {
          verdict = context.verdicts.emplace(key, *best).first;
        }
      }
      if (verdict != context.verdicts.end()) chosen = verdict->second;
    }
    if (!chosen) {
      chosen = choose(c, context.model, bytes, 0.05, s.mode == Mode::kHierarchical).config;
    }
    if (context.decisions.size() >= 4096) context.decisions.clear();  // unbounded sizes
    const double predicted = predict(c, *chosen, context.model, bytes);
    it = context.decisions.emplace(Key{c, bytes}, Decision{*chosen, chosen->describe(), predicted})
             .first;
  }
  return it->second;
}

const Config& decided(MPI_Comm comm, Context& context, Collective c, std::int64_t bytes) {
  return decision(comm, context, c, bytes).config;
}

// The hierarchy and configuration for this call, or null for native.
const Hierarchy* decide(MPI_Comm comm, Collective c, std::int64_t bytes, MPI_Op op,
                        const Config** config) {
  const Settings& s = settings();
  if (!s.error.empty()) throw std::invalid_argument(s.error);
  if (s.mode == Mode::kNative) return nullptr;
  int inter = 0;
  mpi::check(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  if (inter) return nullptr;
  // MPI_Finalize has freed the keys (another library's MPI_COMM_SELF
  // callback, run after ours, may still call a collective): native.
  if (context_keyval() == MPI_KEYVAL_INVALID) return nullptr;
  Context* context = find(comm);
  if (!context) context = attach(comm, build(comm, {}));
  if (!context->hierarchy) return nullptr;
  const Hierarchy& h = *context->hierarchy;
  if (is_reduction(c) && !h.ordered() && !commutative(op)) return nullptr;
  const Decision& d = decision(comm, *context, c, bytes);
  last = d.description;
  last_predicted_seconds = d.predicted;
  if (!d.config.hierarchical) return nullptr;
  *config = &d.config;
  return &h;
}

// Runs a dispatched call: native (PMPI) inside another dispatched call, for
// inter-communicators, for a root out of range (MPI reports it) and when the
// choice says so. The native call reports its own errors through comm's
// error handler; rankshape's own errors go there too, once, as codes.
template <typename Native, typename Hierarchical>
int run(MPI_Comm comm, Collective c, std::int64_t bytes, MPI_Op op, Native native,
        Hierarchical hierarchical, int root = 0) {
  if (inside) return native();
  Inside guard;
  last = kNative;
  last_predicted_seconds = -1;
  trials.clear();
  int code = MPI_SUCCESS;
  try {
    int size = 0;
    mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    if (root < 0 || root >= size) return native();
    const Config* config = nullptr;
    const Hierarchy* h = decide(comm, c, bytes, op, &config);
    if (!h) return native();
    code = hierarchical(*h, *config);
  } catch (const mpi::MpiError& e) {
    code = e.code();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "rankshape: %s\n", e.what());
    code = MPI_ERR_ARG;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rankshape: %s\n", e.what());
    code = MPI_ERR_OTHER;
  }
  return code == MPI_SUCCESS ? code : mpi::call_error_handler(comm, code);
}

}  // namespace

int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return run(
      comm, Collective::kBcast, bytes_of(count, type), MPI_OP_NULL,
      [&] { return PMPI_Bcast(buffer, count, type, root, comm); },
      [&](const Hierarchy& h, const Config& c) {
        return coll::bcast(buffer, count, type, root, h, c);
      },
      root);
}

int reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm) {
  return run(
      comm, Collective::kReduce, bytes_of(count, type), op,
      [&] { return PMPI_Reduce(send, recv, count, type, op, root, comm); },
      [&](const Hierarchy& h, const Config& c) {
        return coll::reduce(send, recv, count, type, op, root, h, c);
      },
      root);
}

int allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm) {
  return run(
      comm, Collective::kAllreduce, bytes_of(count, type), op,
      [&] { return PMPI_Allreduce(send, recv, count, type, op, comm); },
      [&](const Hierarchy& h, const Config& c) {
        return coll::allreduce(send, recv, count, type, op, h, c);
      });
}

int gather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
           MPI_Datatype recv_type, int root, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::int64_t bytes =
      rank == root ? bytes_of(recv_count, recv_type) : bytes_of(send_count, send_type);
  return run(
      comm, Collective::kGather, bytes, MPI_OP_NULL,
      [&] {
        return PMPI_Gather(send, send_count, send_type, recv, recv_count, recv_type, root, comm);
      },
      [&](const Hierarchy& h, const Config&) {
        return coll::gather(send, send_count, send_type, recv, recv_count, recv_type, root, h);
      },
      root);
}

int scatter(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
            MPI_Datatype recv_type, int root, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::int64_t bytes =
      rank == root ? bytes_of(send_count, send_type) : bytes_of(recv_count, recv_type);
  return run(
      comm, Collective::kScatter, bytes, MPI_OP_NULL,
      [&] {
        return PMPI_Scatter(send, send_count, send_type, recv, recv_count, recv_type, root, comm);
      },
      [&](const Hierarchy& h, const Config&) {
        return coll::scatter(send, send_count, send_type, recv, recv_count, recv_type, root, h);
      },
      root);
}

int allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
              MPI_Datatype recv_type, MPI_Comm comm) {
  return run(
      comm, Collective::kAllgather, bytes_of(recv_count, recv_type), MPI_OP_NULL,
      [&] {
        return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
      },
      [&](const Hierarchy& h, const Config& c) {
        return coll::allgather(send, send_count, send_type, recv, recv_count, recv_type, h, c);
      });
}

int reduce_scatter_block(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm) {
  return run(
      comm, Collective::kReduceScatterBlock, bytes_of(count, type), op,
      [&] { return PMPI_Reduce_scatter_block(send, recv, count, type, op, comm); },
      [&](const Hierarchy& h, const Config& c) {
        return coll::reduce_scatter_block(send, recv, count, type, op, h, c);
      });
}

int alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
             MPI_Datatype recv_type, MPI_Comm comm) {
  return run(
      comm, Collective::kAlltoall, bytes_of(recv_count, recv_type), MPI_OP_NULL,
      [&] { return PMPI_Alltoall(send, send_count, send_type, recv, recv_count, recv_type, comm); },
      [&](const Hierarchy& h, const Config&) {
        return coll::alltoall(send, send_count, send_type, recv, recv_count, recv_type, h);
      });
}

int barrier(MPI_Comm comm) {
  return run(
      comm, Collective::kBarrier, 0, MPI_OP_NULL, [&] { return PMPI_Barrier(comm); },
      [&](const Hierarchy& h, const Config& config) { return coll::barrier(h, config); });
}

const Calls& calls() {
  static const Calls all = {
      bcast,    reduce, allreduce, gather, scatter, allgather, reduce_scatter_block,
      alltoall, barrier};
  return all;
}

void set_groups(MPI_Comm comm, std::vector<std::vector<int>> groups) {
  Inside guard;
  if (find(comm)) throw std::logic_error("set_groups: the communicator already has a context");
  attach(comm, build(comm, std::move(groups)));
}

const std::string& last_choice() { return last; }

double last_predicted() { return last_predicted_seconds; }

const std::vector<Trial>& last_trials() { return trials; }

void set_trial_memory(std::int64_t bytes) { trial_memory_set = bytes < 0 ? -1 : bytes; }

std::size_t contexts() { return alive().size(); }

}  // namespace rankshape::coll::dispatch
