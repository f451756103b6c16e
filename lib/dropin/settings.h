// What the topology drop-ins (MPI_Cart_create, the graph constructors)
// share: their settings from the environment, and failing the way MPI does.
//
// Environment (read on every rank; an empty value counts as unset):
//   RANKSHAPE_COSTS=FILE      costs from a dense or structured cost file
//                             (source "file"); every rank reads it
//   RANKSHAPE_SOURCE=NAME     auto (default) | measure | hierarchical |
//                             model | file (needs RANKSHAPE_COSTS)
//   RANKSHAPE_ALGORITHM=NAME  relabelling algorithm (default auto)
//   RANKSHAPE_SEED=N          seed, a non-negative integer (default 1)
//   RANKSHAPE_TIME_LIMIT=S    seconds of search per rank (default 5)
//   RANKSHAPE_REPORT=PATH     rank 0 writes a JSON report there (atomically)
// Each drop-in adds its own switch and pattern variables.
#ifndef RANKSHAPE_LIB_DROPIN_SETTINGS_H_
#define RANKSHAPE_LIB_DROPIN_SETTINGS_H_

#include <mpi.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "lib/mpi/communicator.h"
#include "lib/shape/shape.h"

namespace rankshape::dropin {

/// An error that every rank of the call knows about (agreed on): printed
/// once, then reported on every rank with code.
class AgreedError : public std::runtime_error {
 public:
  AgreedError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// The value of an environment variable; empty when unset.
std::string env(const char* name);
/// NAME='value', for messages.
std::string quoted(const char* name, const std::string& value);

/// The settings every topology drop-in reads (the objective is each
/// drop-in's own).
struct Settings {
  ShapeOptions options;
  std::string report_path;
};

/// Reads the variables above. Throws std::invalid_argument naming the
/// variable and the value.
Settings read_common_settings();

/// Collective: an error every rank knows of. Rank 0 prints it, prefixed,
/// then all throw AgreedError with code (the message is out before any
/// rank can abort in the error handler).
[[noreturn]] void fail_everywhere(const mpi::Communicator& comm, const std::string& prefix,
                                  const std::string& message, int code);

/// Collective: returns if no rank has an error; otherwise every rank fails
/// with the first failing rank's message ("rank R: ...").
void agree(const mpi::Communicator& comm, const std::string& prefix, const std::string& error,
           int code);

/// MPI's way of reporting an error from a call on `old`: its error handler
/// with code; returns code.
int fail(MPI_Comm old, int code);

/// "rank R: " for messages that only some ranks may print.
std::string rank_of(MPI_Comm old);

/// Gives *created the error handler of `old`, as a plain constructor on old
/// would (the drop-in's own copies return errors instead). On failure frees
/// *created and throws mpi::MpiError.
void inherit_errhandler(MPI_Comm old, MPI_Comm* created);

/// The report's common part: tool, p, cost source, algorithm, seeds, times,
/// pattern, objective before and after, and perm (perm[new] = rank of the
/// old communicator).
nlohmann::json report_json(const std::string& tool, const Settings& s, const ShapedComm& shaped);

/// Rank 0 writes j to s.report_path (if set); then every rank learns
/// whether that failed (MPI_ERR_OTHER everywhere).
void write_report(const mpi::Communicator& comm, const std::string& prefix, const Settings& s,
                  const nlohmann::json& j);

/// Runs the drop-in body f (returning an MPI code), turning what it throws
/// into MPI's way of failing on `old`: AgreedError (printed already), MPI
/// errors and others printed with prefix and the rank.
template <class F>
int guarded(MPI_Comm old, const std::string& prefix, F&& f) {
  try {
    return f();
  } catch (const AgreedError& e) {
    return fail(old, e.code());
  } catch (const mpi::MpiError& e) {
    std::fprintf(stderr, "%s%s%s\n", prefix.c_str(), rank_of(old).c_str(), e.what());
    return fail(old, e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s%s%s\n", prefix.c_str(), rank_of(old).c_str(), e.what());
    return fail(old, MPI_ERR_OTHER);
  } catch (...) {
    std::fprintf(stderr, "%s%sunknown error\n", prefix.c_str(), rank_of(old).c_str());
    return fail(old, MPI_ERR_OTHER);
  }
}

}  // namespace rankshape::dropin

#endif  // RANKSHAPE_LIB_DROPIN_SETTINGS_H_
