#include "lib/io/launch_files.h"

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

std::optional<std::vector<int>> common_core_sequence(const Placement& placement,
                                                     const Labelling& labelling) {
  check_sizes(placement, labelling);
  std::map<std::string, std::vector<int>> cores_of_host;
  for (int i = 0; i < labelling.size(); ++i) {
    const HostCore& hc = where(placement, labelling, i);
    cores_of_host[hc.host].push_back(hc.core);
  }
  const std::vector<int>& first = cores_of_host.begin()->second;
  for (const auto& [host, cores] : cores_of_host) {
    if (cores != first) return std::nullopt;
  }
  return first;
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
  const std::optional<std::vector<int>> cores = common_core_sequence(placement, labelling);
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
