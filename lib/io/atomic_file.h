// Writes a file so that readers see either the old file or the complete new
// one, never a half-written one: write to a temporary file in the same
// directory, flush and fsync it, then rename it over the target.
#ifndef RANKSHAPE_LIB_IO_ATOMIC_FILE_H_
#define RANKSHAPE_LIB_IO_ATOMIC_FILE_H_

#include <functional>
#include <ostream>
#include <string>

namespace rankshape {

/// Calls write(out) on a temporary file and renames it to path. On any
/// failure (the callback throws, the disk is full, the directory is
/// read-only) the temporary file is removed, path is untouched, and
/// std::runtime_error names path and the reason.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_IO_ATOMIC_FILE_H_
