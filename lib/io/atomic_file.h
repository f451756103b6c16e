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
/// failure the temporary file is removed and path is untouched. A failure
/// to write (full disk, read-only directory) throws std::runtime_error
/// naming path and the reason; an exception from write propagates as is.
/// A symbolic link at path is replaced, not followed.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_IO_ATOMIC_FILE_H_
