// Tests of readers that must refuse input with a located InputError.
#ifndef RANKSHAPE_TESTS_TESTING_INPUT_ERRORS_H_
#define RANKSHAPE_TESTS_TESTING_INPUT_ERRORS_H_

#include <gtest/gtest.h>

#include <string>

#include "lib/io/input_error.h"

namespace rankshape::testing {

/// Expects read() to throw an InputError whose message contains `located`
/// (the "file:line:col" prefix) and `reason`.
template <class F>
void expect_input_error(F&& read, const std::string& located, const std::string& reason) {
  try {
    read();
    FAIL() << "expected an InputError about " << reason;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(located), std::string::npos) << what;
    EXPECT_NE(what.find(reason), std::string::npos) << what;
  }
}

}  // namespace rankshape::testing

#endif  // RANKSHAPE_TESTS_TESTING_INPUT_ERRORS_H_
