#include "lib/io/launch_files.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

#include "lib/io/atomic_file.h"

namespace rankshape {
namespace {

void check_sizes(const Placement& placement, const Labelling& labelling) {
  if (placement.size() != labelling.size()) {
    throw std::invalid_argument("the placement has " + std::to_string(placement.size()) +
                                " ranks but the labelling has " + std::to_string(labelling.size()));
  }
}

const HostCore& where(const Placement& placement, const Labelling& labelling, int new_rank) {
  return placement.of(labelling.old_of(NewRank(new_rank)));
}

std::string joined(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

}  // namespace

LaunchFormat parse_launch_format(const std::string& name) {
  if (name == "openmpi") return LaunchFormat::kOpenMpi;
  if (name == "mpich" || name == "hydra") return LaunchFormat::kMpich;
  if (name == "slurm") return LaunchFormat::kSlurm;
  throw std::invalid_argument("unknown launcher format '" + name +
                              "': expected openmpi, mpich or slurm");
}

std::string launch_format_name(LaunchFormat format) {
  switch (format) {
    case LaunchFormat::kOpenMpi:
      return "openmpi";
    case LaunchFormat::kMpich:
      return "mpich";
    case LaunchFormat::kSlurm:
      return "slurm";
  }
  return "?";
}

std::optional<std::vector<int>> core_binding_list(const Placement& placement,
                                                  const Labelling& labelling, LaunchFormat format) {
  check_sizes(placement, labelling);
  // The groups whose members a launcher numbers 0, 1, ... for its list.
  std::vector<std::vector<int>> groups;
  if (format == LaunchFormat::kSlurm) {
    std::map<std::string, std::size_t> group_of_host;
    for (int i = 0; i < labelling.size(); ++i) {
      const HostCore& hc = where(placement, labelling, i);
      const auto [it, added] = group_of_host.emplace(hc.host, groups.size());
      if (added) groups.emplace_back();
      groups[it->second].push_back(hc.core);
    }
  } else if (format == LaunchFormat::kMpich) {
    // Hydra merges only consecutive lines of one host into one proxy.
    std::string previous;
    for (int i = 0; i < labelling.size(); ++i) {
      const HostCore& hc = where(placement, labelling, i);
      if (i == 0 || hc.host != previous) groups.emplace_back();
      groups.back().push_back(hc.core);
      previous = hc.host;
    }
  } else {
    return std::nullopt;  // Open MPI's rankfile names every core itself
  }
  // One list for all groups: the longest, of which every other is a prefix.
  const std::vector<int>* longest = &groups.front();
  for (const auto& g : groups) {
    if (g.size() > longest->size()) longest = &g;
  }
  for (const auto& g : groups) {
    if (!std::equal(g.begin(), g.end(), longest->begin())) return std::nullopt;
  }
  return *longest;
}

std::string launch_file_text(const Placement& placement, const Labelling& labelling,
                             LaunchFormat format) {
  check_sizes(placement, labelling);
  std::ostringstream out;
  switch (format) {
    case LaunchFormat::kOpenMpi:
      out << "# Open MPI rankfile written by rankshape relabel (physical CPU ids):\n"
          << "#   mpirun --mca rmaps_rank_file_physical 1 --rankfile FILE -np " << labelling.size()
          << " ./app\n";
      for (int i = 0; i < labelling.size(); ++i) {
        const HostCore& hc = where(placement, labelling, i);
        out << "rank " << i << "=" << hc.host << " slot=" << hc.core << "\n";
      }
      break;
    case LaunchFormat::kMpich:
      out << "# MPICH/Hydra machinefile written by rankshape relabel, one line per rank:\n"
          << "#   mpiexec -f FILE -n " << labelling.size() << " ./app\n";
      for (int i = 0; i < labelling.size(); ++i)
        out << where(placement, labelling, i).host << ":1\n";
      break;
    case LaunchFormat::kSlurm:
      // Slurm reads every line as a host name: no comments.
      for (int i = 0; i < labelling.size(); ++i) out << where(placement, labelling, i).host << "\n";
      break;
  }
  return out.str();
}

std::string launch_command(const Placement& placement, const Labelling& labelling,
                           LaunchFormat format, const std::string& path) {
  const std::string p = std::to_string(labelling.size());
  const std::optional<std::vector<int>> cores = core_binding_list(placement, labelling, format);
  switch (format) {
    case LaunchFormat::kOpenMpi:
      return "mpirun --mca rmaps_rank_file_physical 1 --rankfile " + path + " -np " + p + " ./app";
    case LaunchFormat::kMpich:
      return "mpiexec -f " + path + " -n " + p + (cores ? " -bind-to user:" + joined(*cores) : "") +
             " ./app" + (cores ? "" : "  (hosts differ in core order: cores left to the launcher)");
    case LaunchFormat::kSlurm:
      return "SLURM_HOSTFILE=" + path + " srun --distribution=arbitrary -n " + p +
             (cores ? " --cpu-bind=map_cpu:" + joined(*cores) : "") + " ./app" +
             (cores ? "" : "  (hosts differ in core order: cores left to the launcher)");
  }
  return "";
}

void write_launch_file(const std::string& path, const Placement& placement,
                       const Labelling& labelling, LaunchFormat format) {
  const std::string text = launch_file_text(placement, labelling, format);
  write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

}  // namespace rankshape
