// What every rankshape command does the same way: parse with CLI11 (with
// --version), turn any error into "NAME: error: message" on stderr and a
// non-zero exit status (2 for bad usage, 1 for bad input or a failed run).
#ifndef RANKSHAPE_CMD_CLI_H_
#define RANKSHAPE_CMD_CLI_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>

#include "rankshape/version.h"

namespace rankshape::cli {

/// --version: prints "NAME (rankshape 0.1.0)" and exits 0.
inline void add_version_flag(CLI::App& app) {
  app.set_version_flag("--version",
                       app.get_name() + " (rankshape " + std::string(rankshape_version()) + ")");
}

inline int run(CLI::App& app, int argc, char** argv, const std::function<void()>& body) {
  add_version_flag(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace rankshape::cli

#endif  // RANKSHAPE_CMD_CLI_H_
