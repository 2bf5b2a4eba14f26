// PlanReconcile: the store is the truth; the directory's entries of this node follow it.
#include "manager/location_reconciler.h"

#include <string>

#include <gtest/gtest.h>

namespace rplasma::manager {
namespace {

ObjectID IdStartingWith(uint8_t first_byte) {
  std::string bytes(ObjectID::kSize, '\0');
  bytes[0] = static_cast<char>(first_byte);
  return *ObjectID::FromBinary(bytes);
}

ObjectInfo Sealed(uint8_t first_byte) {
  ObjectInfo info;
  info.id = IdStartingWith(first_byte);
  info.state = ObjectState::kSealed;
  return info;
}

std::vector<ObjectID> Published(const LocationPlan& plan) {
  std::vector<ObjectID> ids;
  for (const ObjectInfo& o : plan.publish) ids.push_back(o.id);
  return ids;
}

TEST(LocationReconcilerTest, PublishesWhatTheDirectoryLacksAndRemovesWhatTheStoreLost) {
  const std::vector<ObjectInfo> sealed = {Sealed(1), Sealed(2)};
  const LocationPlan plan =
      PlanReconcile(sealed, std::vector<ObjectID>{IdStartingWith(2), IdStartingWith(3)}, {}, /*full=*/false);
  EXPECT_EQ(Published(plan), std::vector<ObjectID>{IdStartingWith(1)});
  EXPECT_EQ(plan.remove, std::vector<ObjectID>{IdStartingWith(3)});
}

TEST(LocationReconcilerTest, AFullReconcilePublishesEverySealedObject) {
  const std::vector<ObjectInfo> sealed = {Sealed(1), Sealed(2)};
  const LocationPlan plan =
      PlanReconcile(sealed, std::vector<ObjectID>{IdStartingWith(1), IdStartingWith(2)}, {}, /*full=*/true);
  EXPECT_EQ(Published(plan), (std::vector<ObjectID>{IdStartingWith(1), IdStartingWith(2)}));
  EXPECT_TRUE(plan.remove.empty());
}

TEST(LocationReconcilerTest, DirtyIdsArePublishedAgainOrRemovedAgain) {
  const std::vector<ObjectInfo> sealed = {Sealed(1)};
  // 1 is listed but its last update failed; 4 is neither held nor listed, but its remove failed.
  const LocationPlan plan = PlanReconcile(sealed, std::vector<ObjectID>{IdStartingWith(1)},
                                          {IdStartingWith(1), IdStartingWith(4)}, /*full=*/false);
  EXPECT_EQ(Published(plan), std::vector<ObjectID>{IdStartingWith(1)});
  EXPECT_EQ(plan.remove, std::vector<ObjectID>{IdStartingWith(4)});
}

TEST(LocationReconcilerTest, ADirectoryThatCannotListGetsEverythingPublishedAndNothingRemoved) {
  const std::vector<ObjectInfo> sealed = {Sealed(1), Sealed(2)};
  const LocationPlan plan = PlanReconcile(sealed, std::nullopt, {}, /*full=*/false);
  EXPECT_EQ(Published(plan), (std::vector<ObjectID>{IdStartingWith(1), IdStartingWith(2)}));
  EXPECT_TRUE(plan.remove.empty());
}

TEST(LocationReconcilerTest, AnEmptyStoreRemovesEveryListedEntry) {
  const LocationPlan plan = PlanReconcile({}, std::vector<ObjectID>{IdStartingWith(7)}, {}, /*full=*/true);
  EXPECT_TRUE(plan.publish.empty());
  EXPECT_EQ(plan.remove, std::vector<ObjectID>{IdStartingWith(7)});
}

}  // namespace
}  // namespace rplasma::manager
