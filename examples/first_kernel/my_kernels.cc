#include <cstdio>
#include "visa.h"
int main() {
  visa::Axes axes = *visa::Axes::Parse("A = 64");
  std::printf("%lld\n", (long long)axes["A"].size());
  return 0;
}
