// halo_bench: the time of one halo-exchange step of a stencil program,
// under several labellings of the same job, side by side in one run:
//   mpirun -np P halo_bench --grid 32x32 --pattern stencil:periodic
//       --labelling identity --labelling stencil=perm.txt --bytes 65536,1048576
//       --out halo.csv
// For each labelling (NAME=FILE: line i of FILE is the old rank at grid
// position i, as `relabel --perm` writes; "identity": the job's order) the
// ranks are renumbered by grid position, and every rank trades a message
// with each stencil neighbour of its position (nonblocking sends and
// receives, then one wait for all): a message of `bytes` times the
// neighbour's weight. --warmup steps run first, then --reps timed ones;
// the time kept is the slowest rank's mean step time.
// Under SimGrid SMPI the times are simulated (deterministic), and the
// buffers come from SMPI_SHARED_MALLOC, so that thousands of simulated
// ranks sending MiB messages fit in little real memory (SMPI's default
// smpi/shared-malloc, global; the data is then garbage, the timing right;
// lib/mpi/message_buffer.h).
// Output (rank 0, written atomically at the end): CSV rows
//   labelling,bytes,seconds,messages
// with messages the number this rank count sends in one step.
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/exchange.h"
#include "cmd/mpi_main.h"
#include "lib/io/atomic_file.h"
#include "lib/io/formats.h"
#include "lib/model/pattern.h"
#include "lib/mpi/communicator.h"
#include "lib/mpi/error.h"

namespace {

using namespace rankshape;

struct Args {
  std::string grid, pattern = "stencil", out;
  std::vector<std::string> labellings;
  std::vector<std::int64_t> bytes = {65536};
  int reps = 5, warmup = 1;
};

// The slowest rank's mean step time of `reps` halo steps on comm, whose
// rank is the grid position.
double halo_step(const mpi::Communicator& comm, const Stencil& stencil, std::int64_t bytes,
                 int reps, int warmup, std::int64_t& messages) {
  const int x = comm.rank();
  const std::vector<int> coords = stencil.grid().coords(NewRank(x));
  std::vector<bench::ExchangePeer> peers;
  for (int o = 0; o < stencil.offsets(); ++o) {
    const int to = stencil.neighbour(coords, x, o);
    const int from = stencil.neighbour(coords, x, stencil.opposite(o));
    const auto size =
        static_cast<std::size_t>(static_cast<double>(bytes) * stencil.weight(o) + 0.5);
    peers.push_back({to < 0 ? MPI_PROC_NULL : to, from < 0 ? MPI_PROC_NULL : from, o, size});
  }
  std::int64_t mine = 0;
  for (const bench::ExchangePeer& p : peers) mine += p.send_to != MPI_PROC_NULL;
  mpi::check(MPI_Allreduce(&mine, &messages, 1, MPI_INT64_T, MPI_SUM, comm.get()), "MPI_Allreduce");
  return bench::timed_exchange(comm, peers, reps, warmup);
}

int run(const Args& a) {
  const mpi::Communicator world(MPI_COMM_WORLD, mpi::Ownership::kBorrow);
  const Grid grid = Grid::parse(a.grid);
  if (grid.size() != world.size()) {
    throw std::invalid_argument("grid " + grid.to_string() + " has " + std::to_string(grid.size()) +
                                " positions, the job " + std::to_string(world.size()) + " ranks");
  }
  const Pattern pattern = Pattern::parse(a.pattern);
  if (!pattern.is_stencil()) throw std::invalid_argument("--pattern must be a stencil");
  const Stencil stencil(pattern.stencil, grid);
  if (a.reps < 1 || a.warmup < 0) throw std::invalid_argument("--reps >= 1 and --warmup >= 0");
  for (std::int64_t b : a.bytes) {
    if (b < 0 || b > (std::int64_t{1} << 30))
      throw std::invalid_argument("--bytes from 0 to 1 GiB");
  }
  std::ostringstream csv;
  csv << "labelling,bytes,seconds,messages\n";
  for (const std::string& spec : a.labellings) {
    const std::size_t eq = spec.find('=');
    const std::string name = spec.substr(0, eq);
    const Labelling labelling =
        eq == std::string::npos
            ? (name == "identity" ? Labelling::identity(grid.size())
                                  : throw std::invalid_argument(
                                        "--labelling NAME=FILE or identity, got '" + spec + "'"))
            : read_labelling(spec.substr(eq + 1), grid.size());
    const int position = labelling.new_of(OldRank(world.rank())).value();
    const mpi::Communicator comm(mpi::split_comm(world.get(), 0, position), mpi::Ownership::kTake);
    for (std::int64_t b : a.bytes) {
      std::int64_t messages = 0;
      const double seconds = halo_step(comm, stencil, b, a.reps, a.warmup, messages);
      csv << fmt::format("{},{},{:.9g},{}\n", name, b, seconds, messages);
      if (world.rank() == 0) {
        std::cerr << fmt::format("halo_bench: {} {} B: {:.6g} s per step\n", name, b, seconds);
      }
    }
  }
  if (world.rank() == 0) {
    if (a.out.empty()) {
      std::cout << csv.str();
    } else {
      write_file_atomically(a.out, [&](std::ostream& out) { out << csv.str(); });
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Args a;
  CLI::App app("The time of one halo-exchange step under several labellings of the job.",
               "halo_bench");
  app.add_option("--grid", a.grid, "grid, e.g. 32x32 (its size is the job's)")->required();
  app.add_option("--pattern", a.pattern, "the stencil (lib/model/pattern.h)")
      ->capture_default_str();
  app.add_option("--labelling", a.labellings,
                 "NAME=FILE (line i: old rank at grid position i) or identity; repeatable")
      ->required();
  app.add_option("--bytes", a.bytes, "message size per neighbour (times its weight)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--reps", a.reps, "timed steps")->capture_default_str();
  app.add_option("--warmup", a.warmup, "untimed steps first")->capture_default_str();
  app.add_option("--out", a.out, "CSV to write (rank 0); stdout if not given");
  return parse_run_finalize(app, argc, argv, [&] { return run(a); });
}
