// CommittedPages (runtime/committed_pages.h): a page written counts as committed; a page only read
// (mapped to the shared zero page) does not, but is mapped; a page never touched is neither.
#include "runtime/committed_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "gtest/gtest.h"

namespace visa {
namespace {

class CommittedPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    void* block = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(block, MAP_FAILED);
    data_ = static_cast<uint8_t*>(block);
  }
  void TearDown() override { munmap(data_, kBytes); }

  static constexpr int64_t kPage = 4096;
  static constexpr int64_t kBytes = 64 * kPage;
  uint8_t* data_ = nullptr;
};

TEST_F(CommittedPagesTest, OnlyWrittenPagesAreCommitted) {
  ASSERT_EQ(sysconf(_SC_PAGESIZE), kPage);
  EXPECT_EQ(CommittedBytes(data_, kBytes), 0);
  data_[3 * kPage + 5] = 1;
  data_[10 * kPage] = 1;
  volatile uint8_t read = data_[20 * kPage];  // maps the zero page
  EXPECT_EQ(read, 0);
  EXPECT_EQ(CommittedBytes(data_, kBytes), 2 * kPage);
  // A range is widened to whole pages.
  EXPECT_EQ(CommittedBytes(data_ + 3 * kPage + 100, 1), kPage);
  EXPECT_EQ(CommittedBytes(data_ + 4 * kPage, 6 * kPage), 0);
}

TEST_F(CommittedPagesTest, ReadPagesAreMappedButUntouchedOnesAreNot) {
  volatile uint8_t read = data_[20 * kPage];
  EXPECT_EQ(read, 0);
  EXPECT_TRUE(AnyMapped(data_ + 20 * kPage, kPage));
  EXPECT_FALSE(AnyMapped(data_ + 21 * kPage, 10 * kPage));
  data_[40 * kPage] = 7;
  EXPECT_TRUE(AnyMapped(data_ + 30 * kPage, 20 * kPage));
  EXPECT_FALSE(AnyMapped(data_, 0));
}

}  // namespace
}  // namespace visa
