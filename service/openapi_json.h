// docs/openapi.json, compiled in (served at GET /v1/openapi.json), so the
// document served is always the one in the source tree at build time.
//
// Thread-safety: constant data; read it from any thread.
#pragma once

namespace culprit::service {
extern const char* const kOpenApiJson;
}
