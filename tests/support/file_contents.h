// ReadFileContents: a whole file as a string, "" if it cannot be opened (a log not written yet).
// For tests reading back logs and command output.
#ifndef RPLASMA_TESTS_SUPPORT_FILE_CONTENTS_H_
#define RPLASMA_TESTS_SUPPORT_FILE_CONTENTS_H_

#include <fstream>
#include <sstream>
#include <string>

namespace rplasma::testing {

inline std::string ReadFileContents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_FILE_CONTENTS_H_
