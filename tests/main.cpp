// The doctest runner for all unit tests (tests/compiler, tests/runtime).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
