#include "core/av_marker.hpp"

#include <gtest/gtest.h>

namespace zerohop {
namespace {

TEST(AvMarker, FallsOnEveryFullSecondOfTheCaptureClock) {
  EXPECT_EQ(avMarkerAtOrBefore(5'000'000'000), 5'000'000'000);
  EXPECT_EQ(avMarkerAtOrBefore(5'999'999'999), 5'000'000'000);
  EXPECT_EQ(avMarkerAtOrAfter(5'000'000'000), 5'000'000'000);
  EXPECT_EQ(avMarkerAtOrAfter(5'000'000'001), 6'000'000'000);
  EXPECT_EQ(avMarkerAtOrBefore(-1), -1'000'000'000);  // the schedule holds before the clock's origin too
  EXPECT_EQ(avMarkerAtOrAfter(-1), 0);
}

TEST(AvMarker, AnIntervalHoldsTheMarkerOnlyWhenAnInstantLiesInside) {
  // A 30 fps frame starting 10 ms before a full second holds it; the frame after does not.
  EXPECT_TRUE(avMarkerIn(9'990'000'000, 10'023'333'333));
  EXPECT_FALSE(avMarkerIn(10'023'333'333, 10'056'666'666));
  EXPECT_TRUE(avMarkerIn(10'000'000'000, 10'010'000'000));   // begin is inclusive
  EXPECT_FALSE(avMarkerIn(9'990'000'000, 10'000'000'000));   // end is exclusive
  EXPECT_FALSE(avMarkerIn(10'000'000'000, 10'000'000'000));  // empty
}

}  // namespace
}  // namespace zerohop
