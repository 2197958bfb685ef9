// The replay driver: runs one fuzz target's LLVMFuzzerTestOneInput on every
// file of the directories (or files) given, once each, in name order. This
// is how the seed corpora (and the crashes fuzzing found, which are kept in
// them) run as ordinary ctest tests in every build, with gcc and without
// libFuzzer; a target's invariant failure aborts, which fails the test.
// The libFuzzer binaries (-DCULPRIT_FUZZ=ON, scripts/fuzz.sh) do not link this.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    fs::path p(argv[i]);
    if (fs::is_directory(p, ec)) {
      fs::directory_iterator it(p, ec), end;
      for (; !ec && it != end; it.increment(ec))
        if (it->is_regular_file()) inputs.push_back(it->path());
      if (ec) {
        std::fprintf(stderr, "%s: cannot list: %s\n", argv[i], ec.message().c_str());
        return 2;
      }
    } else if (fs::is_regular_file(p, ec)) {
      inputs.push_back(p);
    } else {
      std::fprintf(stderr, "%s: not a file or directory\n", argv[i]);
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs: an empty corpus proves nothing\n");
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());
  for (const auto& p : inputs) {
    std::ifstream f(p, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (!f.eof() && f.fail()) {
      std::fprintf(stderr, "%s: read error\n", p.c_str());
      return 2;
    }
    std::fprintf(stderr, "%s (%zu bytes)\n", p.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu inputs replayed\n", inputs.size());
  return 0;
}
