#include "lib/profile/recorder.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "lib/io/traffic.h"

namespace rankshape::profile {

namespace detail {
LastSend last_send;
thread_local int forwarding RANKSHAPE_FAST_TLS = 0;
}  // namespace detail

using detail::forwarding;
using detail::last_send;

namespace {

struct State {
  int rank = 0;
  int size = 0;
  std::unique_ptr<std::atomic<std::int64_t>[]> bytes;     // [world rank]
  std::unique_ptr<std::atomic<std::int64_t>[]> messages;  // [world rank]
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Group world_group = MPI_GROUP_NULL;
  CommInfo world_info;          // world empty: the identity
  bool threads_at_once = true;  // MPI_THREAD_MULTIPLE (or not known)
  std::mutex mutex;             // translations being made, persistent requests
  struct Persistent {
    int to;
    std::int64_t bytes;
  };
  std::unordered_map<MPI_Request, Persistent> persistent;
};

// The last keyed collective (below MPI_THREAD_MULTIPLE only, so never two
// threads at once): the arguments of its latest repeat, its sends in world
// ranks, counted once when recorded, and the calls since that repeated it,
// added at the next flush. Outside State so that repeat_last() reads it
// without state()'s checks.
struct Repeat {
  bool valid = false;
  CollectiveCall call;  // count -1: the datatype was freed
  std::int64_t bytes = 0;
  std::vector<Send> sends;  // to: a world rank
  std::int64_t times = 0;
} last;

State* state();
void add(State& s, int world_dest, std::int64_t bytes, std::int64_t messages);

void flush(State& s) {
  Repeat& r = last;
  if (r.times > 0) {
    for (const Send& send : r.sends) add(s, send.to, send.bytes * r.times, send.messages * r.times);
  }
  r.times = 0;
}

// The attribute's deletion (MPI_Comm_free): a freed handle may come back
// as another communicator, so its repeats are added now.
int free_translation(MPI_Comm comm, int, void* value, void*) {
  if (State* s = state(); s != nullptr && last.valid && last.call.comm == comm) {
    flush(*s);
    last.valid = false;
  }
  if (last_send.comm == comm) last_send.valid = false;
  delete static_cast<CommInfo*>(value);
  return MPI_SUCCESS;
}

// The process's counts, set up at the first use (after MPI_Init); null
// before MPI is initialised or when it cannot be.
State* state() {
  static State s;
  static std::once_flag once;
  static std::atomic<bool> ready{false};
  if (ready.load(std::memory_order_acquire)) return &s;
  int initialised = 0;
  if (PMPI_Initialized(&initialised) != MPI_SUCCESS || !initialised) return nullptr;
  std::call_once(once, [] {
    if (PMPI_Comm_rank(MPI_COMM_WORLD, &s.rank) != MPI_SUCCESS ||
        PMPI_Comm_size(MPI_COMM_WORLD, &s.size) != MPI_SUCCESS ||
        PMPI_Comm_group(MPI_COMM_WORLD, &s.world_group) != MPI_SUCCESS ||
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_translation, &s.keyval, nullptr) !=
            MPI_SUCCESS) {
      std::fprintf(stderr, "rankshape profile: cannot set up; nothing is recorded\n");
      return;
    }
    int level = MPI_THREAD_MULTIPLE;
    if (PMPI_Query_thread(&level) == MPI_SUCCESS) s.threads_at_once = level == MPI_THREAD_MULTIPLE;
    s.world_info.rank = s.rank;
    s.world_info.size = s.size;
    s.bytes = std::make_unique<std::atomic<std::int64_t>[]>(static_cast<std::size_t>(s.size));
    s.messages = std::make_unique<std::atomic<std::int64_t>[]>(static_cast<std::size_t>(s.size));
    for (int r = 0; r < s.size; ++r) {
      s.bytes[r].store(0, std::memory_order_relaxed);
      s.messages[r].store(0, std::memory_order_relaxed);
    }
    ready.store(true, std::memory_order_release);
  });
  return ready.load(std::memory_order_acquire) ? &s : nullptr;
}

// comm's description, kept as its attribute (MPI_COMM_WORLD's in State);
// null when comm cannot be asked.
const CommInfo* describe(State& s, MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return &s.world_info;
  if (comm == MPI_COMM_NULL) return nullptr;
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, s.keyval, &value, &found) == MPI_SUCCESS && found) {
    return static_cast<const CommInfo*>(value);
  }
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (PMPI_Comm_get_attr(comm, s.keyval, &value, &found) == MPI_SUCCESS && found) {
    return static_cast<const CommInfo*>(value);
  }
  auto info = std::make_unique<CommInfo>();
  int inter = 0;
  MPI_Group group = MPI_GROUP_NULL;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
      PMPI_Comm_rank(comm, &info->rank) != MPI_SUCCESS ||
      PMPI_Comm_size(comm, &info->size) != MPI_SUCCESS ||
      (inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) !=
          MPI_SUCCESS) {
    return nullptr;
  }
  info->inter = inter != 0;
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
  info->world.resize(static_cast<std::size_t>(n));
  const int code =
      PMPI_Group_translate_ranks(group, n, ranks.data(), s.world_group, info->world.data());
  PMPI_Group_free(&group);
  if (code != MPI_SUCCESS || PMPI_Comm_set_attr(comm, s.keyval, info.get()) != MPI_SUCCESS) {
    return nullptr;
  }
  return info.release();
}

// comm's rank dest as a rank of MPI_COMM_WORLD, or -1.
int to_world(const State& s, const CommInfo& comm, int dest) {
  if (dest < 0) return -1;  // MPI_PROC_NULL
  const int w = comm.world.empty() ? dest
                : static_cast<std::size_t>(dest) < comm.world.size()
                    ? comm.world[static_cast<std::size_t>(dest)]
                    : -1;
  return w >= 0 && w < s.size ? w : -1;
}

// Below MPI_THREAD_MULTIPLE no two threads call MPI at once, so a plain
// load and store does (no locked instruction: a small allreduce takes
// ~200 ns, and every ns shows).
void add(State& s, int world_dest, std::int64_t bytes, std::int64_t messages) {
  if (world_dest < 0 || world_dest == s.rank) return;
  std::atomic<std::int64_t>& b = s.bytes[world_dest];
  std::atomic<std::int64_t>& m = s.messages[world_dest];
  if (s.threads_at_once) {
    b.fetch_add(bytes, std::memory_order_relaxed);
    m.fetch_add(messages, std::memory_order_relaxed);
  } else {
    b.store(b.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    m.store(m.load(std::memory_order_relaxed) + messages, std::memory_order_relaxed);
  }
}

}  // namespace

std::string output_path() {
  const char* env = std::getenv("RANKSHAPE_PROFILE_OUT");
  return env != nullptr && *env != '\0' ? env : "rankshape.traffic";
}

std::int64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED ||
      size < 0) {
    return 0;
  }
  return static_cast<std::int64_t>(count) * size;
}

const CommInfo* comm_info(MPI_Comm comm) {
  State* s = state();
  return s == nullptr ? nullptr : describe(*s, comm);
}

std::vector<std::int64_t> blocks(int n, const int* counts, MPI_Datatype type) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(n), 0);
  for (int j = 0; j < n && counts != nullptr; ++j) {
    out[static_cast<std::size_t>(j)] = bytes_of(counts[j], type);
  }
  return out;
}

std::vector<int> out_neighbours(MPI_Comm comm) {
  std::vector<int> out;
  int kind = MPI_UNDEFINED;
  if (comm == MPI_COMM_NULL || PMPI_Topo_test(comm, &kind) != MPI_SUCCESS) return out;
  if (kind == MPI_CART) {
    int dims = 0;
    if (PMPI_Cartdim_get(comm, &dims) != MPI_SUCCESS) return out;
    for (int k = 0; k < dims; ++k) {
      int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
      if (PMPI_Cart_shift(comm, k, 1, &source, &dest) != MPI_SUCCESS) return {};
      out.push_back(source);
      out.push_back(dest);
    }
  } else if (kind == MPI_GRAPH) {
    int rank = 0, count = 0;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
        PMPI_Graph_neighbors_count(comm, rank, &count) != MPI_SUCCESS) {
      return out;
    }
    out.resize(static_cast<std::size_t>(count));
    if (PMPI_Graph_neighbors(comm, rank, count, out.data()) != MPI_SUCCESS) return {};
  } else if (kind == MPI_DIST_GRAPH) {
    int in = 0, count = 0, weighted = 0;
    if (PMPI_Dist_graph_neighbors_count(comm, &in, &count, &weighted) != MPI_SUCCESS) return out;
    std::vector<int> sources(static_cast<std::size_t>(in) + 1), in_weights(sources.size()),
        out_weights(static_cast<std::size_t>(count) + 1);
    out.resize(static_cast<std::size_t>(count) + 1);
    if (PMPI_Dist_graph_neighbors(comm, in, sources.data(), in_weights.data(), count, out.data(),
                                  out_weights.data()) != MPI_SUCCESS) {
      return {};
    }
    out.resize(static_cast<std::size_t>(count));
  }
  return out;
}

namespace detail {
void record_new_send(MPI_Comm comm, int dest, int count, MPI_Datatype type) {
  if (forwarding > 0) return;  // the Fortran entry point counts it
  State* s = state();
  if (s == nullptr || dest < 0) return;  // MPI_PROC_NULL
  const CommInfo* c = describe(*s, comm);
  if (c == nullptr) return;
  const int world = to_world(*s, *c, dest);
  const std::int64_t bytes = bytes_of(count, type);
  add(*s, world, bytes, 1);
  if (s->threads_at_once) return;
  const bool counted = world >= 0 && world != s->rank;
  last_send = {true,
               comm,
               dest,
               count,
               type,
               bytes,
               counted ? &s->bytes[world] : nullptr,
               counted ? &s->messages[world] : nullptr};
}
}  // namespace detail

void record_sends(const CommInfo& comm, const Sends& sends) {
  State* s = state();
  if (s == nullptr) return;
  for (const Send& send : sends) add(*s, to_world(*s, comm, send.to), send.bytes, send.messages);
}

bool repeat_last(const CollectiveCall& call) {
  Repeat& r = last;
  if (!r.valid || forwarding > 0 || r.call.comm != call.comm || r.call.call != call.call ||
      r.call.root != call.root) {
    return false;
  }
  if (r.call.count != call.count || r.call.type != call.type) {
    if (bytes_of(call.count, call.type) != r.bytes) return false;
    r.call = call;  // the next repeat, with these arguments, asks nothing
  }
  ++r.times;
  return true;
}

void record_keyed(const CollectiveCall& call, std::int64_t bytes, const CommInfo& comm,
                  const Sends& sends) {
  State* s = state();
  if (s == nullptr) return;
  if (s->threads_at_once) {
    record_sends(comm, sends);
    return;
  }
  flush(*s);
  Repeat& r = last;
  r.valid = true;
  r.call = call;
  r.bytes = bytes;
  r.sends.clear();
  for (const Send& send : sends)
    r.sends.push_back({to_world(*s, comm, send.to), send.bytes, send.messages});
  for (const Send& send : r.sends) add(*s, send.to, send.bytes, send.messages);
}

void forget_datatype(MPI_Datatype type) {
  if (last.valid && last.call.type == type) last.call.count = -1;
  if (last_send.type == type) last_send.valid = false;
}

Sends& scratch_sends() {
  thread_local Sends buffer RANKSHAPE_FAST_TLS;
  buffer.clear();
  return buffer;
}

void register_persistent(MPI_Request request, MPI_Comm comm, int dest, int count,
                         MPI_Datatype type) {
  State* s = state();
  if (s == nullptr || request == MPI_REQUEST_NULL) return;
  const CommInfo* c = describe(*s, comm);
  const int to = c == nullptr ? -1 : to_world(*s, *c, dest);
  const std::lock_guard<std::mutex> lock(s->mutex);
  s->persistent[request] = {to, bytes_of(count, type)};
}

void record_start(MPI_Request request) {
  State* s = state();
  if (s == nullptr) return;
  State::Persistent p{-1, 0};
  {
    const std::lock_guard<std::mutex> lock(s->mutex);
    const auto it = s->persistent.find(request);
    if (it == s->persistent.end()) return;  // a receive, or not ours
    p = it->second;
  }
  add(*s, p.to, p.bytes, 1);
}

void forget_persistent(MPI_Request request) {
  State* s = state();
  if (s == nullptr) return;
  const std::lock_guard<std::mutex> lock(s->mutex);
  s->persistent.erase(request);
}

int write_at_finalize() {
  State* s = state();
  if (s == nullptr) return MPI_ERR_OTHER;
  // MPI frees neither at MPI_Finalize; nothing is counted after this.
  struct Release {
    State& s;
    ~Release() {
      PMPI_Comm_free_keyval(&s.keyval);
      PMPI_Group_free(&s.world_group);
    }
  } release{*s};
  flush(*s);
  last.valid = false;
  std::vector<std::int64_t> mine;  // (to, bytes, messages) for every rank sent to
  for (int r = 0; r < s->size; ++r) {
    const std::int64_t b = s->bytes[r].load(std::memory_order_relaxed);
    const std::int64_t m = s->messages[r].load(std::memory_order_relaxed);
    if (b > 0 || m > 0) mine.insert(mine.end(), {r, b, m});
  }
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(s->rank == 0 ? static_cast<std::size_t>(s->size) : 0);
  int code = PMPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) return code;
  std::vector<int> displs(counts.size(), 0);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = static_cast<int>(total);
    total += counts[i];
  }
  // Gatherv's displacements are ints: every rank must hear that they overflow.
  int fits = total <= INT32_MAX ? 1 : 0;
  code = PMPI_Bcast(&fits, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) return code;
  if (!fits) {
    if (s->rank == 0) {
      std::fprintf(stderr, "rankshape profile: too many pairs to gather (%lld values)\n",
                   static_cast<long long>(total));
    }
    return MPI_ERR_COUNT;
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(total));
  code = PMPI_Gatherv(mine.data(), n, MPI_INT64_T, all.data(), counts.data(), displs.data(),
                      MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) return code;
  int outcome = MPI_SUCCESS;
  if (s->rank == 0) {
    std::vector<DirectedTraffic> lines;
    std::int64_t bytes = 0, messages = 0;
    for (int from = 0; from < s->size; ++from) {
      for (int i = displs[from]; i < displs[from] + counts[from]; i += 3) {
        lines.push_back({from, static_cast<int>(all[i]), all[i + 1], all[i + 2]});
        bytes += all[i + 1];
        messages += all[i + 2];
      }
    }
    const std::string path = output_path();
    try {
      write_directed_traffic(path, s->size, lines);
      std::fprintf(stderr,
                   "rankshape profile: %lld bytes in %lld messages between %zu ordered pairs of "
                   "%d ranks, written to %s\n",
                   static_cast<long long>(bytes), static_cast<long long>(messages), lines.size(),
                   s->size, path.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rankshape profile: cannot write %s: %s\n", path.c_str(), e.what());
      outcome = MPI_ERR_IO;
    }
  }
  code = PMPI_Bcast(&outcome, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return code != MPI_SUCCESS ? code : outcome;
}

bool forwarding_from_fortran() { return forwarding > 0; }
FortranForward::FortranForward() { ++forwarding; }
FortranForward::~FortranForward() { --forwarding; }

}  // namespace rankshape::profile
