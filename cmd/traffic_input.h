// --traffic and --bytes-per-message, shared by relabel and evaluate: a
// traffic graph in place of a grid.
#ifndef RANKSHAPE_CMD_TRAFFIC_INPUT_H_
#define RANKSHAPE_CMD_TRAFFIC_INPUT_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "lib/io/traffic.h"

namespace rankshape::cli {

struct TrafficInput {
  std::vector<std::string> paths;
  double bytes_per_message = kDefaultBytesPerMessage;

  bool given() const { return !paths.empty(); }

  /// Adds the options; --traffic excludes grid_option.
  void add_to(CLI::App& app, CLI::Option* grid_option) {
    app.add_option("--traffic", paths,
                   "traffic files instead of a grid (rankshape's traffic format, Open MPI "
                   "monitoring .prof files, or *_size.mat / *_msg.mat matrices; "
                   "docs/file-formats.md#traffic): the graph of who sends how much to whom")
        ->excludes(grid_option);
    app.add_option("--bytes-per-message", bytes_per_message,
                   "with --traffic: what one message's latency is worth in bytes; a pair weighs "
                   "its bytes plus this times its messages")
        ->check(CLI::Range(0.0, 1e15))
        ->capture_default_str();
  }

  /// The graph over `ranks` ranks (the files must agree with it).
  std::shared_ptr<const TrafficGraph> read(int ranks) const {
    return std::make_shared<const TrafficGraph>(
        traffic_graph(read_traffic(paths, ranks), bytes_per_message));
  }
};

}  // namespace rankshape::cli

#endif  // RANKSHAPE_CMD_TRAFFIC_INPUT_H_
