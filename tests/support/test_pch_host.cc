// Compiles tests/support/test_pch.h once for the build; every rplasma_test reuses it.
#include <gtest/gtest.h>

TEST(TestPchHost, Compiles) {}
