// The dashboard's web assets (dashboard/assets/), compiled into the binary
// by dashboard/embed_assets.cmake: the server needs no files at run time and
// no page loads anything from elsewhere.
//
// Thread-safety: the assets are constant data; read them from any thread.
#pragma once

#include <cstddef>

namespace culprit::dashboard {

struct Asset {
  const char* path;          // "/assets/dashboard.css"
  const char* content_type;  // "text/css; charset=utf-8"
  const unsigned char* data;
  size_t size;
};

extern const Asset kAssets[];
extern const size_t kAssetCount;

}  // namespace culprit::dashboard
