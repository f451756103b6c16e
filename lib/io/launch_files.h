// Files that make a launcher start rank i where a labelling puts it: new
// rank i runs on the host and core of old rank labelling.old_of(i).
//
//   openmpi  Open MPI rankfile, "rank i=HOST slot=CPU" (physical CPU ids):
//              mpirun --mca rmaps_rank_file_physical 1 --rankfile FILE -np P ./app
//   mpich    MPICH/Hydra machinefile, one "HOST:1" line per rank in order:
//              mpiexec -f FILE -n P [-bind-to user:C0,C1,...] ./app
//   slurm    a hostfile for --distribution=arbitrary, one host per rank:
//              SLURM_HOSTFILE=FILE srun --distribution=arbitrary -n P
//                [--cpu-bind=map_cpu:C0,C1,...] ./app
// Hydra and Slurm bind with one list of cores for all nodes, indexed by a
// task's place in its group (core_binding_list()), so cores are exact only
// when the groups agree; launch_command() then adds the list and otherwise
// leaves core binding to the launcher and says so.
#ifndef RANKSHAPE_LIB_IO_LAUNCH_FILES_H_
#define RANKSHAPE_LIB_IO_LAUNCH_FILES_H_

#include <optional>
#include <string>
#include <vector>

#include "lib/model/labelling.h"
#include "lib/model/placement.h"

namespace rankshape {

enum class LaunchFormat { kOpenMpi, kMpich, kSlurm };

/// "openmpi", "mpich" (also "hydra") or "slurm"; throws std::invalid_argument.
LaunchFormat parse_launch_format(const std::string& name);
std::string launch_format_name(LaunchFormat format);

/// The file's text. Throws std::invalid_argument if sizes differ.
std::string launch_file_text(const Placement& placement, const Labelling& labelling,
                             LaunchFormat format);

/// The one core list a launcher applies to every group it numbers 0, 1,
/// ...: Slurm numbers a node's tasks, Hydra the tasks of one run of
/// consecutive lines of a host (it merges only those into one proxy).
/// Present when every group's cores are a prefix of one list; always
/// absent for Open MPI, whose rankfile names every core itself.
std::optional<std::vector<int>> core_binding_list(const Placement& placement,
                                                  const Labelling& labelling, LaunchFormat format);

/// How to start the application with the file at path.
std::string launch_command(const Placement& placement, const Labelling& labelling,
                           LaunchFormat format, const std::string& path);

/// Writes launch_file_text() atomically.
void write_launch_file(const std::string& path, const Placement& placement,
                       const Labelling& labelling, LaunchFormat format);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_IO_LAUNCH_FILES_H_
