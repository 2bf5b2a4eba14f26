#include "protocol/base/json_writer.h"

#include <string>

#include "gtest/gtest.h"

#include "nlohmann/json.hpp"

namespace rplasma {
namespace {

TEST(JsonWriterTest, NestedObjectsAndArraysParseBack) {
  JsonArray recent;
  recent.Object(JsonObject().String("id", "ab").Number("bytes", 1));
  recent.Object(JsonObject().String("id", "cd").Number("bytes", 2));
  JsonObject doc;
  doc.Number("n", 7)
      .SignedNumber("delta", -3)
      .Decimal("mean_us", 12.345, 1)
      .Object("by", JsonObject().Object("get", JsonObject().Number("fetches", 5)))
      .Object("none", JsonObject())
      .Array("recent", recent)
      .Array("empty", JsonArray());
  const std::string text = doc.str();
  EXPECT_EQ(text, R"({"n":7,"delta":-3,"mean_us":12.3,"by":{"get":{"fetches":5}},"none":{},)"
                  R"("recent":[{"id":"ab","bytes":1},{"id":"cd","bytes":2}],"empty":[]})");
  const nlohmann::json parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed["by"]["get"]["fetches"], 5);
  EXPECT_EQ(parsed["recent"][1]["id"], "cd");
  EXPECT_EQ(parsed["delta"], -3);
  EXPECT_DOUBLE_EQ(parsed["mean_us"].get<double>(), 12.3);
}

TEST(JsonWriterTest, StringsAndKeysAreEscaped) {
  const std::string nasty = std::string("q\"b\\s/n\nt\tr\rc\x01\x1f", 15) + "\xc3\xa9";
  JsonObject doc;
  doc.String(nasty, nasty);
  const std::string text = doc.str();
  EXPECT_EQ(text.find('\n'), std::string::npos) << "no raw control character survives: " << text;
  EXPECT_NE(text.find("\\u0001"), std::string::npos) << text;
  const nlohmann::json parsed = nlohmann::json::parse(text);
  ASSERT_TRUE(parsed.contains(nasty)) << text;
  EXPECT_EQ(parsed[nasty].get<std::string>(), nasty) << "round trip, UTF-8 included";
}

TEST(JsonWriterTest, NonFiniteDecimalsAreNull) {
  const nlohmann::json parsed =
      nlohmann::json::parse(JsonObject().Decimal("inf", 1.0 / 0.0, 1).Decimal("nan", 0.0 / 0.0, 1).str());
  EXPECT_TRUE(parsed["inf"].is_null());
  EXPECT_TRUE(parsed["nan"].is_null());
}

TEST(JsonWriterTest, MembersAppendsAnotherObjectsMembers) {
  JsonObject a;
  a.Number("x", 1);
  JsonObject b;
  b.Number("y", 2);
  EXPECT_EQ(JsonObject(a).Members(b).str(), R"({"x":1,"y":2})");
  EXPECT_EQ(JsonObject().Members(b).str(), R"({"y":2})");
  EXPECT_EQ(JsonObject(a).Members(JsonObject()).str(), R"({"x":1})");
}

}  // namespace
}  // namespace rplasma
