// RPLASMA_LOG_LEVEL: names and numbers; anything else is refused (and reported), never read as 0.
#include "protocol/base/logging.h"

#include <gtest/gtest.h>

namespace rplasma::logging {
namespace {

TEST(LogLevelTest, NamesInAnyCase) {
  EXPECT_EQ(ParseLogLevel("debug"), INFO);
  EXPECT_EQ(ParseLogLevel("info"), INFO);
  EXPECT_EQ(ParseLogLevel("warning"), WARNING);
  EXPECT_EQ(ParseLogLevel("WARNING"), WARNING);
  EXPECT_EQ(ParseLogLevel("warn"), WARNING);
  EXPECT_EQ(ParseLogLevel("Error"), ERROR);
  EXPECT_EQ(ParseLogLevel("fatal"), FATAL);
}

TEST(LogLevelTest, TheNumbersStillWork) {
  EXPECT_EQ(ParseLogLevel("0"), INFO);
  EXPECT_EQ(ParseLogLevel("1"), WARNING);
  EXPECT_EQ(ParseLogLevel("2"), ERROR);
  EXPECT_EQ(ParseLogLevel("3"), FATAL);
}

TEST(LogLevelTest, AnythingElseIsUnknownNotZero) {
  for (const char* bad : {"", "verbose", "4", "-1", "1x", "warning ", "inf"}) {
    EXPECT_EQ(ParseLogLevel(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace rplasma::logging
