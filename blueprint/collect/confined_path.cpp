#include "blueprint/collect/confined_path.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "base/text_util.h"

namespace culprit::blueprint {

namespace {

// Characters glob(3) or a shell-like brace expansion gives a meaning to.
constexpr std::string_view kGlobChars = "*?[]{}\\";

bool has_control(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// A value as it may be quoted in a message: bounded, control characters escaped.
std::string shown(std::string_view v) { return escape_for_terminal(truncate_utf8(v, 80)); }

// Why `v` cannot fill a one-component placeholder, or "".
std::string component_problem(std::string_view v) {
  if (v.empty()) return "is empty";
  if (v == "." || v == "..") return "is a relative directory name";
  if (v.find('/') != std::string_view::npos) return "has '/'";
  if (v.find_first_of(kGlobChars) != std::string_view::npos) return "has a glob character";
  if (has_control(v)) return "has a control character";
  return "";
}

// Why `v` cannot fill {work_dir}, or "".
std::string work_dir_problem(std::string_view v) {
  if (v.empty()) return "is empty";
  if (v.front() != '/') return "is not an absolute path";
  if (v.find_first_of(kGlobChars) != std::string_view::npos) return "has a glob character";
  if (has_control(v)) return "has a control character";
  for (auto part : split(v, '/'))
    if (part == "." || part == "..") return "has a '.' or '..' component";
  return "";
}

// `v` with every character glob(3) would interpret escaped by '\'.
std::string glob_escaped(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

bool under(const std::string& path, const std::string& root) {
  if (root == "/") return !path.empty() && path.front() == '/';
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}

std::string real_path_of(const std::string& p, int& err) {
  char buf[PATH_MAX];
  if (!::realpath(p.c_str(), buf)) {
    err = errno;
    return "";
  }
  err = 0;
  return buf;
}

std::string kind_of(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

// Kernel pseudo-filesystems: sizes are 0 or 4096 whatever the content, and
// reads may block or have effects (procfs's kmsg, debugfs, tracefs).
bool pseudo_fs(int fd) {
  struct statfs sf {};
  if (fstatfs(fd, &sf) != 0) return false;
  static constexpr std::array<long, 9> kTypes = {PROC_SUPER_MAGIC, SYSFS_MAGIC,     DEBUGFS_MAGIC,
                                                 TRACEFS_MAGIC,    SECURITYFS_MAGIC, CGROUP_SUPER_MAGIC,
                                                 CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC, DEVPTS_SUPER_MAGIC};
  for (long t : kTypes)
    if (static_cast<long>(sf.f_type) == t) return true;
  return false;
}

bool pseudo_path(const std::string& real) { return under(real, "/proc") || under(real, "/sys") || under(real, "/dev"); }

struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

OpenedFile refused(OpenedFile r, std::string why) {
  r.outcome = OpenOutcome::kRefused;
  r.why = std::move(why);
  return r;
}

OpenedFile failed(OpenedFile r, std::string why) {
  r.outcome = OpenOutcome::kFailed;
  r.why = std::move(why);
  return r;
}

}  // namespace

bool fill_path_template(const std::string& tmpl, const TemplateValues& v, PathPattern& out, std::string& error) {
  out = PathPattern{};
  const std::pair<std::string_view, const std::string*> kNames[] = {
      {"work_dir", &v.work_dir}, {"node", &v.node},       {"job_id", &v.job_id}, {"user", &v.user},
      {"cluster", &v.cluster},   {"source", &v.source},   {"date", &v.date}};
  bool prefix_open = true;  // still in the part that names the root
  std::string prefix;
  size_t i = 0;
  while (i < tmpl.size()) {
    const std::string* value = nullptr;
    std::string_view name;
    if (tmpl[i] == '{') {
      size_t close = tmpl.find('}', i);
      if (close != std::string::npos) {
        std::string_view var(tmpl.data() + i + 1, close - i - 1);
        for (const auto& [n, p] : kNames)
          if (n == var) {
            name = n;
            value = p;
          }
      }
    }
    if (!value) {  // a literal character of the template
      char c = tmpl[i++];
      out.text += c;
      out.glob += c;
      if (prefix_open && (c == '*' || c == '?' || c == '[' || c == '\\')) prefix_open = false;
      if (prefix_open) prefix += c;
      continue;
    }
    i += name.size() + 2;
    std::string problem = name == "work_dir" ? work_dir_problem(*value) : component_problem(*value);
    if (!problem.empty()) {
      error = fmt::format("{{{}}} value '{}' {}: it cannot fill {}", name, shown(*value), problem, shown(tmpl));
      return false;
    }
    out.text += *value;
    out.glob += glob_escaped(*value);
    // {work_dir} is a directory the scheduler names: the root may include
    // it. Any other value is the job's or the scheduler's: the root stops.
    if (prefix_open && name == "work_dir") prefix += *value;
    else prefix_open = false;
  }
  size_t slash = prefix.rfind('/');
  out.root = slash == std::string::npos || slash == 0 ? "/" : prefix.substr(0, slash);
  while (out.root.size() > 1 && out.root.back() == '/') out.root.pop_back();
  return true;
}

OpenedFile open_confined(const std::string& path, const std::string& root) {
  OpenedFile r;
  int err = 0;
  std::string real_root = real_path_of(root, err);
  if (real_root.empty()) return failed(std::move(r), fmt::format("its directory {} cannot be resolved: {}", root, std::strerror(err)));
  r.real_path = real_path_of(path, err);
  if (r.real_path.empty()) {
    struct stat lst {};
    if (err == ENOENT && lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
      return refused(std::move(r), "a symbolic link to nothing");
    return failed(std::move(r), std::strerror(err));
  }
  if (!under(r.real_path, real_root))
    return refused(std::move(r), fmt::format("a symbolic link out of {} (to {})", root, r.real_path));
  if (pseudo_path(r.real_path))
    return refused(std::move(r), "a file of /proc, /sys or /dev (a kernel pseudo-file, not a log)");

  // Walk the real path from "/" without following any link: it has none, so
  // one found now was put there after realpath() (a swap) and is refused.
  Fd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd < 0) return failed(std::move(r), std::strerror(errno));
  auto parts = split(r.real_path, '/');
  std::vector<std::string> names;
  for (auto p : parts)
    if (!p.empty()) names.emplace_back(p);
  if (names.empty()) {  // "/" itself
    r.outcome = OpenOutcome::kDirectory;
    return r;
  }
  for (size_t k = 0; k + 1 < names.size(); ++k) {
    Fd next(::openat(dir.fd, names[k].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.fd < 0) {
      if (errno == ELOOP || errno == ENOTDIR)
        return refused(std::move(r), "a directory on its path was replaced by a link or a file while it was opened");
      return failed(std::move(r), std::strerror(errno));
    }
    std::swap(dir.fd, next.fd);
  }
  const std::string& leaf = names.back();
  Fd look(::openat(dir.fd, leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (look.fd < 0) return failed(std::move(r), std::strerror(errno));
  struct stat st {};
  if (fstat(look.fd, &st) != 0) return failed(std::move(r), std::strerror(errno));
  if (S_ISDIR(st.st_mode)) {
    r.outcome = OpenOutcome::kDirectory;
    return r;
  }
  if (S_ISLNK(st.st_mode)) return refused(std::move(r), "it was replaced by a symbolic link while it was opened");
  if (!S_ISREG(st.st_mode)) return refused(std::move(r), fmt::format("{}, not a regular file", kind_of(st.st_mode)));
  if (pseudo_fs(look.fd)) return refused(std::move(r), "a file of a kernel pseudo-filesystem (procfs, sysfs, ...), not a log");
  // Only now open it for reading; O_NONBLOCK and the inode check keep a
  // FIFO swapped in at the last instant from blocking the run.
  Fd file(::openat(dir.fd, leaf.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
  if (file.fd < 0) {
    if (errno == ELOOP) return refused(std::move(r), "it was replaced by a symbolic link while it was opened");
    return failed(std::move(r), std::strerror(errno));
  }
  struct stat fst {};
  if (fstat(file.fd, &fst) != 0) return failed(std::move(r), std::strerror(errno));
  if (fst.st_dev != st.st_dev || fst.st_ino != st.st_ino || !S_ISREG(fst.st_mode))
    return refused(std::move(r), "it was replaced while it was opened");
  r.outcome = OpenOutcome::kOpened;
  r.st = fst;
  r.fd = file.release();
  return r;
}

}  // namespace culprit::blueprint
