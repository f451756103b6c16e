// The end of an MPI command-line tool's main(), after MPI_Init and the
// options: parse (with --version; usage and errors printed by rank 0 only), run with
// MPI_ERRORS_RETURN on MPI_COMM_WORLD, report an exception from rank 0 as
// "NAME: error: ...", finalize. For tools whose arguments are the same on
// every rank, so that every rank fails alike.
#ifndef RANKSHAPE_CMD_MPI_MAIN_H_
#define RANKSHAPE_CMD_MPI_MAIN_H_

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cmd/cli.h"

namespace rankshape {

/// Returns main()'s exit status: run()'s, 1 after an exception, 2 for bad
/// options (0 for --help).
template <typename Run>
int parse_run_finalize(CLI::App& app, int argc, char** argv, Run run) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  cli::add_version_flag(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    status = rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
    MPI_Finalize();
    return status == 0 ? 0 : 2;
  }
  try {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    status = run();
  } catch (const std::exception& e) {
    if (rank == 0) std::cerr << app.get_name() << ": error: " << e.what() << "\n";
    status = 1;
  }
  MPI_Finalize();
  return status;
}

}  // namespace rankshape

#endif  // RANKSHAPE_CMD_MPI_MAIN_H_
