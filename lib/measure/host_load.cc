#include "lib/measure/host_load.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

namespace rankshape {
namespace {

// FNV-1a: a host key every rank computes alike.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The kernel's boot id, or the processor name where /proc cannot tell.
std::string host_key() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (in && std::getline(in, id) && !id.empty()) return "boot:" + id;
  return "name:" + mpi::Communicator::processor_name();
}

}  // namespace

bool HostLoad::oversubscribed() const {
  for (std::size_t h = 0; h < ranks.size(); ++h) {
    if (ranks[h] > cpus[h]) return true;
  }
  return false;
}

std::string HostLoad::describe() const {
  std::map<std::pair<int, int>, int> kinds;  // (ranks, cpus) -> hosts
  for (std::size_t h = 0; h < ranks.size(); ++h) ++kinds[{ranks[h], cpus[h]}];
  std::string out;
  for (const auto& [kind, hosts] : kinds) {
    if (!out.empty()) out += ", ";
    out += std::to_string(hosts) + (hosts == 1 ? " host: " : " hosts: ") +
           std::to_string(kind.first) + (kind.first == 1 ? " rank on " : " ranks on ") +
           std::to_string(kind.second) + (kind.second == 1 ? " CPU" : " CPUs");
  }
  return out;
}

HostLoad detect_host_load(const mpi::Communicator& comm,
                          const std::function<void(const std::string&)>& waiting) {
  const int p = comm.size();
  const int me = comm.rank();
  HostLoad load;
  if (mpi::simulated()) {
    for (int r = 0; r < p; ++r) load.host_of.push_back(r);
    load.ranks.assign(static_cast<std::size_t>(p), 1);
    load.cpus.assign(static_cast<std::size_t>(p), 1);
    return load;
  }
  // Each rank's host key and affinity mask go to rank 0 one by one, so
  // that a rank that never comes is named (waiting) rather than hidden in
  // a collective.
  struct Report {
    std::uint64_t key;
    cpu_set_t cpus;
  } mine{};
  mine.key = fnv1a(host_key());
  CPU_ZERO(&mine.cpus);
  if (sched_getaffinity(0, sizeof mine.cpus, &mine.cpus) != 0) CPU_SET(0, &mine.cpus);
  constexpr int kTag = 0x5253;  // "RS"
  std::vector<int> table;       // host_of[p], then cpus per host
  if (me == 0) {
    std::map<std::uint64_t, int> index;
    std::vector<cpu_set_t> unions;
    for (int r = 0; r < p; ++r) {
      Report from = mine;
      if (r > 0) {
        if (waiting) waiting("waiting for rank " + std::to_string(r) + " to start measuring");
        mpi::check(MPI_Recv(&from, static_cast<int>(sizeof from), MPI_BYTE, r, kTag, comm.get(),
                            MPI_STATUS_IGNORE),
                   "MPI_Recv");
      }
      const auto [it, added] = index.emplace(from.key, static_cast<int>(index.size()));
      if (added) {
        unions.push_back(from.cpus);
      } else {
        CPU_OR(&unions[it->second], &unions[it->second], &from.cpus);
      }
      table.push_back(it->second);
    }
    for (const cpu_set_t& u : unions) table.push_back(std::max(1, CPU_COUNT(&u)));
  } else {
    mpi::check(MPI_Send(&mine, static_cast<int>(sizeof mine), MPI_BYTE, 0, kTag, comm.get()),
               "MPI_Send");
    if (waiting) waiting("waiting for rank 0 to tell the hosts");
  }
  int n = static_cast<int>(table.size());
  mpi::check(MPI_Bcast(&n, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
  table.resize(static_cast<std::size_t>(n));
  mpi::check(MPI_Bcast(table.data(), n, MPI_INT, 0, comm.get()), "MPI_Bcast");
  load.host_of.assign(table.begin(), table.begin() + p);
  const int hosts = *std::max_element(load.host_of.begin(), load.host_of.end()) + 1;
  load.cpus.assign(table.begin() + p, table.begin() + p + hosts);
  load.ranks.assign(load.cpus.size(), 0);
  for (int h : load.host_of) ++load.ranks[h];
  return load;
}

void quiet_wait(std::vector<MPI_Request>& requests, const std::function<double()>& pause) {
  if (mpi::simulated()) {  // simulated time: nothing to leave free
    mpi::check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
               "MPI_Waitall");
    return;
  }
  // Every sleep ends in MPI_Testall, which also moves this rank's own
  // pending messages on: a rank asleep for long would hold them back.
  for (;;) {
    int done = 0;
    mpi::check(
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
        "MPI_Testall");
    if (done) return;
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::clamp(pause(), 20e-6, kLongestPause)));
  }
}

void quiet_barrier(const mpi::Communicator& comm) {
  if (mpi::simulated()) {
    comm.barrier();
    return;
  }
  std::vector<MPI_Request> request(1, MPI_REQUEST_NULL);
  mpi::check(MPI_Ibarrier(comm.get(), request.data()), "MPI_Ibarrier");
  double pause = 50e-6;
  quiet_wait(request, [&pause] { return pause = std::min(2 * pause, kLongestPause); });
}

void wait_before_pass(int pass) {
  if (mpi::simulated()) return;
  std::this_thread::sleep_for(std::chrono::duration<double>(0.25 * (1 << std::clamp(pass, 0, 4))));
}

}  // namespace rankshape
