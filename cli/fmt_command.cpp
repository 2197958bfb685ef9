// `culprit fmt`: rewrites .attr files in the canonical layout
// (compiler/formatter.h), or with --check lists those that are not in it.
// A file is written only when its layout changes, through a temporary file
// renamed over it, so an interrupted run never leaves half a file.
#include "cli/fmt_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/args.h"
#include "cli/line_diff.h"
#include "cli/text_output.h"
#include "compiler/formatter.h"

namespace culprit::cli {

namespace {

const char* kFmtHelp = R"(Usage: culprit fmt [--check | --diff] PATH...
       culprit fmt -                     (stdin to stdout)

Rewrites .attr files (each PATH is a file or a directory, searched
recursively) in the one canonical layout: two-space indentation per block,
continuation lines four more, one space between tokens, comments and line
breaks kept, one blank line between declarations. Only whitespace changes;
a file that does not parse is reported and left alone.

Options:
  --check      change nothing; list the files that are not formatted and
               exit 1 if there are any (for CI)
  --diff       change nothing; print what formatting would change, as a
               unified diff (patch -p0 applies it), and exit 1 if anything
  -h, --help   this help

Exit status: 0 done (with --check or --diff: everything is formatted), 1 they found
files to reformat, 2 bad usage or a file that cannot be read or parsed.
)";

int usage(const std::string& msg) {
  std::cerr << fmt::format("culprit fmt: {}\nTry 'culprit fmt --help'.\n", msg);
  return 2;
}

bool read_all(std::istream& in, std::string& out) {
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

}  // namespace

int cmd_fmt(int argc, char** argv) {
  ArgSpec spec{{"check", "diff", "help"}, {}};
  Args a;
  std::string err;
  if (!parse_args(argc, argv, 2, spec, a, err)) return usage(err);
  if (a.has("help")) {
    std::cout << kFmtHelp;
    return 0;
  }
  if (a.positionals.empty()) return usage("give the .attr files or directories to format (or - for stdin)");
  bool diff = a.has("diff");
  bool check = a.has("check") || diff;
  if (a.has("check") && diff) return usage("--check and --diff: give one (--diff also exits 1 when something would change)");

  if (a.positionals.size() == 1 && a.positionals[0] == "-") {
    std::string text, out;
    read_all(std::cin, text);
    Diagnostics diags;
    if (!format_attr(make_source_file("<stdin>", text), out, diags)) {
      std::cerr << diags.render(auto_color(STDERR_FILENO));
      return 2;
    }
    if (diff) std::cout << unified_diff(text, out, "<stdin>", "<stdin> (formatted)");
    if (check) return out == text ? 0 : 1;
    std::cout << out;
    return 0;
  }

  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& p : a.positionals) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
           it.increment(ec))
        if (it->is_regular_file(ec) && it->path().extension() == ".attr") found.push_back(it->path());
      if (found.empty()) {
        std::cerr << fmt::format("culprit fmt: '{}' holds no .attr files\n", p);
        return 2;
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.emplace_back(p);
    } else {
      std::cerr << fmt::format("culprit fmt: '{}' does not exist\n", p);
      return 2;
    }
  }
  int rc = 0;
  size_t changed = 0;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string text, out;
    if (!in || !read_all(in, text)) {
      std::cerr << fmt::format("culprit fmt: cannot read {}\n", f.string());
      rc = 2;
      continue;
    }
    Diagnostics diags;
    if (!format_attr(make_source_file(f.string(), text), out, diags)) {
      std::cerr << diags.render(auto_color(STDERR_FILENO));
      rc = 2;
      continue;
    }
    if (out == text) continue;
    ++changed;
    if (diff) {
      std::cout << unified_diff(text, out, f.string(), f.string());
      continue;
    }
    if (check) {
      std::cout << fmt::format("{}: not formatted\n", f.string());
      continue;
    }
    fs::path tmp = f;
    tmp += ".culprit-fmt.tmp";
    {
      std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
      o << out;
      o.close();
      if (!o) {
        std::cerr << fmt::format("culprit fmt: cannot write {}\n", tmp.string());
        std::error_code ec;
        fs::remove(tmp, ec);
        rc = 2;
        continue;
      }
    }
    std::error_code ec;
    fs::permissions(tmp, fs::status(f, ec).permissions(), ec);
    fs::rename(tmp, f, ec);
    if (ec) {
      std::cerr << fmt::format("culprit fmt: cannot replace {}: {}\n", f.string(), ec.message());
      fs::remove(tmp, ec);
      rc = 2;
      continue;
    }
    std::cout << fmt::format("formatted {}\n", f.string());
  }
  if (rc) return rc;
  if (check && changed) {
    std::cerr << fmt::format("culprit fmt: {} file{} not formatted (run 'culprit fmt' on {})\n", changed, changed == 1 ? "" : "s",
                             changed == 1 ? "it" : "them");
    return 1;
  }
  return 0;
}

}  // namespace culprit::cli
