#include "tests/support/run_binary.h"

#include <sys/wait.h>

#include <cstdio>
#include <regex>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rplasma::testing {

Ran RunShell(const std::string& command) {
  Ran ran;
  std::FILE* pipe = ::popen((command + " </dev/null 2>&1").c_str(), "r");
  if (pipe == nullptr) return ran;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) ran.output.append(buffer, n);
  const int status = ::pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

Ran RunBinary(const std::string& name, const std::string& args) {
  return RunShell(absl::StrCat("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ", RPLASMA_BIN_DIR, "/", name,
                               " ", args));
}

void ExpectVersionLine(const std::string& name, const std::string& version) {
  const Ran ran = RunBinary(name, "--version");
  EXPECT_EQ(ran.exit_code, 0) << name << ": " << ran.output;
  const std::regex line(name + " " + version + R"( \(git ([0-9a-f]{7,40}|unknown)\)\n)");
  EXPECT_TRUE(std::regex_match(ran.output, line)) << name << ": " << ran.output;
}

void ExpectRefused(const std::string& name, const std::string& args, const std::string& message) {
  const Ran ran = RunBinary(name, args);
  EXPECT_EQ(ran.exit_code, 2) << name << " " << args << ": " << ran.output;
  EXPECT_THAT(ran.output, ::testing::HasSubstr(message)) << name << " " << args;
}

}  // namespace rplasma::testing
