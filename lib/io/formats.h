// Reading and writing rankshape's files. Formats (see docs/file-formats.md):
//  - dense costs: p rows of p numbers (whitespace or commas, '#' comments);
//  - structured costs: a keyword file starting "rankshape-structured 1";
//  - labelling: line i holds the old rank placed at new rank i;
//  - placement: lines "rank host core".
// Readers validate strictly and throw InputError with file, line and column.
// Writers go through write_file_atomically: never a half-written file.
#ifndef RANKSHAPE_LIB_IO_FORMATS_H_
#define RANKSHAPE_LIB_IO_FORMATS_H_

#include <memory>
#include <string>
#include <vector>

#include "lib/model/costs.h"
#include "lib/model/labelling.h"
#include "lib/model/placement.h"

namespace rankshape {

/// Non-fatal problems found while reading (e.g. an asymmetric matrix that
/// was symmetrised); each message starts with the file name.
using Warnings = std::vector<std::string>;

/// Reads a dense matrix. An asymmetric matrix is symmetrised with the mean
/// of D(a,b) and D(b,a) and a warning; a non-zero diagonal is zeroed with a
/// warning (a rank never pays to talk to itself).
DenseCosts read_dense_costs(const std::string& path, Warnings* warnings = nullptr);
/// Largest rank count a structured file may declare (its locations take
/// 8 bytes per rank: 128 MiB at this limit).
constexpr int kMaxStructuredRanks = 1 << 24;
StructuredCosts read_structured_costs(const std::string& path);
/// Reads either form, telling them apart by the "rankshape-structured" header.
std::unique_ptr<Costs> read_costs(const std::string& path, Warnings* warnings = nullptr);

void write_dense_costs(const std::string& path, const Costs& costs);
void write_structured_costs(const std::string& path, const StructuredCosts& costs);

/// expected_size > 0 also checks the number of lines against it.
Labelling read_labelling(const std::string& path, int expected_size = 0);
void write_labelling(const std::string& path, const Labelling& labelling);

Placement read_placement(const std::string& path, int expected_size = 0);
void write_placement(const std::string& path, const Placement& placement);

/// Shortest text that reads back to exactly the same double.
std::string format_number(double value);

}  // namespace rankshape

#endif  // RANKSHAPE_LIB_IO_FORMATS_H_
