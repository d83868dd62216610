// Tile views: a window of a buffer along one dimension, the manual's `.tile::<I, LEN, E2>(start)`.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "dsl/mapping.h"

namespace visa {

// A view of `len` consecutive values of the tile dimension `dim` starting at `start`, inside a
// buffer laid out by `buffer`. The view's own mapping keeps the buffer's footprint (the tile
// dimension is resized to `len` and padded back to its extent, `B / 32 = 2 # 16`), so every other
// dimension keeps its stride; the view begins `offset` positions into the buffer and its tensor
// coordinates are tile-local (the tile dimension starts at 0). Tiles may overlap.
struct TileView {
  Mapping mapping;       // positions relative to `offset`, tile-local coordinates
  int64_t offset = 0;    // buffer position of the view's first position
  Mapping dim;           // the tile dimension, e.g. `B / 32`
  int64_t start = 0;     // in units of `dim`
  int64_t len = 0;

  // The buffer's tensor index of a tile-local index (the tile dimension shifted by `start`).
  Index ToBufferIndex(const Index& tile_index) const;
};

// Derives the view. `dim` must be a single digit of one axis that the buffer lays out contiguously
// (e.g. `B`, `B / 32`), and `start + len` must not exceed its size.
absl::StatusOr<TileView> Tile(const Mapping& buffer, const Mapping& dim, int64_t len, int64_t start);

// As above, and checks that `expected` (the manual's E2) is equivalent to the derived view mapping.
absl::StatusOr<TileView> Tile(const Mapping& buffer, const Mapping& dim, int64_t len,
                              const Mapping& expected, int64_t start);

}  // namespace visa
