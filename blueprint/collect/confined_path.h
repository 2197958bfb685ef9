// Path templates filled with scheduler-supplied values, and opening what
// they match without leaving the directory the template names
// (docs/blueprint.md, "Path templates").
//
// The values of a template's placeholders come from the scheduler and from
// the job's owner ({work_dir} is whatever directory a job was submitted
// from; a job's output directory is the job owner's to fill with links), yet
// `culprit run` reads with the rights of the account it runs as. So:
//
//   * Filling (fill_path_template). A value for a one-component placeholder
//     ({node}, {job_id}, {user}, {cluster}, {source}, {date}) must be a
//     non-empty name without '/', without a glob or brace character
//     (* ? [ ] { } \), without control characters, and not "." or "..";
//     {work_dir} must be an absolute path with none of those characters and
//     no "." or ".." component. A value that breaks this is refused (the
//     file is not looked for; the report says which value). Characters that
//     came from values are escaped in the glob pattern, so only the
//     template's own '*', '?' and '[' match more than themselves.
//   * Confinement. The template's literal prefix, with {work_dir} when the
//     template starts with it, up to its last '/' before the first other
//     placeholder or glob character, names the root: "/var/log/{node}/x*"
//     has /var/log, "{work_dir}/slurm-{job_id}.out" has the job's WorkDir.
//     A match is read only when its real path (links resolved) stays under
//     the root's real path: a link to a file inside is followed, a link
//     out of it (slurm-42.out -> /home/bob/secret.log) is refused.
//   * Opening (open_confined). The real path is opened component by
//     component from "/" with O_NOFOLLOW (a directory swapped for a link
//     after the check is refused, not followed), first as O_PATH to look at
//     the file without opening it, then for reading with O_NONBLOCK and
//     checked to be the same inode: only a regular file is ever opened for
//     reading, so a FIFO or a device cannot block the run. Files of kernel
//     pseudo-filesystems (procfs, sysfs, debugfs, ... by statfs type; /proc,
//     /sys and /dev by path), whose size says nothing of their content, are
//     refused too.
//
// A refusal is reported (CollectorReport errors, "PATH: refused: WHY"),
// never mistaken for "no file matches".
//
// Thread-safety: pure functions of the filesystem; safe to call
// concurrently.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

namespace culprit::blueprint {

// The values a template's placeholders take for one file lookup.
struct TemplateValues {
  std::string work_dir, node, job_id, user, cluster, source, date;
};

// A template filled in.
struct PathPattern {
  std::string text;  // the path as filled in (for messages and tests)
  std::string glob;  // for glob(3): the template's own glob characters active, the values' escaped
  std::string root;  // the directory every match must stay in (no trailing '/', "/" at worst)
};

// False with `error` ("{node} value 'a/b' has '/' ...") when a placeholder
// of `tmpl` has a value the rules above refuse; placeholders the template
// does not use are not checked.
bool fill_path_template(const std::string& tmpl, const TemplateValues& values, PathPattern& out, std::string& error);

// What open_confined made of a match.
enum class OpenOutcome {
  kOpened,     // `fd` is open for reading (the caller closes it)
  kDirectory,  // a directory: not a log, skipped without a word
  kRefused,    // not read on purpose: `why` says why (a link out of the root, a FIFO, a procfs file, ...)
  kFailed,     // could not be opened: `why` has the system's reason (permission denied, vanished)
};

struct OpenedFile {
  OpenOutcome outcome = OpenOutcome::kFailed;
  int fd = -1;              // with kOpened: O_RDONLY|O_NONBLOCK|O_CLOEXEC, on a regular file
  std::string real_path;    // links resolved; with kOpened, what `fd` is
  struct stat st {};        // with kOpened: fstat of `fd`
  std::string why;          // with kRefused / kFailed
};

// Opens `path` (a match of a pattern whose root is `root`) under the rules
// above. Never blocks on a FIFO or a device; never throws.
OpenedFile open_confined(const std::string& path, const std::string& root);

}  // namespace culprit::blueprint
