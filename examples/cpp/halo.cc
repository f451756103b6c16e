// A halo exchange on a communicator rankshape has relabelled, from C++,
// built with CMake against an installed rankshape (see CMakeLists.txt):
//
//   cmake -S . -B build -DCMAKE_PREFIX_PATH=/opt/rankshape && cmake --build build
//   mpirun -np 4 build/halo 1 4 [COST_FILE]
//
// The same program as examples/c/halo.c, through rankshape.hpp (errors
// are exceptions, the shape frees its communicators).
#include <mpi.h>

#include <cstdio>
#include <rankshape/rankshape.hpp>
#include <string>
#include <vector>

namespace {

int run(int argc, char** argv, int world_rank, int world_size) {
  if (argc != 3 && argc != 4) {
    if (world_rank == 0) std::fprintf(stderr, "usage: halo Q0 Q1 [COST_FILE]\n");
    return 2;
  }
  rankshape::Options options;
  options.pattern = "stencil:periodic";
  options.periods = {1, 1};
  if (argc == 4) {
    options.source = "file";
    options.cost_file = argv[3];
  }
  try {
    const rankshape::Shape shape(MPI_COMM_WORLD, {std::stoi(argv[1]), std::stoi(argv[2])}, options);
    int rank = 0, failed = 0, any = 0;
    MPI_Comm_rank(shape.comm(), &rank);
    for (int k = 0; k < 2; ++k) {
      int down = 0, up = 0, from_down = -1, from_up = -1;
      MPI_Cart_shift(shape.comm(), k, 1, &down, &up);
      MPI_Sendrecv(&rank, 1, MPI_INT, up, 0, &from_down, 1, MPI_INT, down, 0, shape.comm(),
                   MPI_STATUS_IGNORE);
      MPI_Sendrecv(&rank, 1, MPI_INT, down, 1, &from_up, 1, MPI_INT, up, 1, shape.comm(),
                   MPI_STATUS_IGNORE);
      if (from_down != down || from_up != up) failed = 1;
    }
    std::vector<int> carts(static_cast<std::size_t>(world_size));
    MPI_Gather(&rank, 1, MPI_INT, carts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (world_rank == 0) {
      std::printf("rankshape %s (built with %s)\n", rankshape::version().c_str(),
                  RANKSHAPE_VERSION_STRING);
      for (int k = 0; k < world_size; ++k) std::printf("world %d cart %d\n", k, carts[k]);
      std::printf(any ? "checks failed\n" : "checks ok\n");
    }
    return any;
  } catch (const rankshape::Error& e) {
    // Thrown on every rank alike.
    if (world_rank == 0) std::fprintf(stderr, "halo: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const int status = run(argc, argv, world_rank, world_size);
  MPI_Finalize();
  return status;
}
