// Path templates under hostile values and job directories (issue 38): the
// files collector reads only regular files inside the directory a template
// names, refuses the rest and says so (blueprint/collect/confined_path.h).
#include "blueprint/collect/confined_path.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "base/timestamp.h"
#include "blueprint/collect/files_collector.h"
#include "tests/support/test_support.h"

using namespace culprit;
using namespace culprit::blueprint;
namespace fs = std::filesystem;

namespace {

PathPattern filled(const std::string& tmpl, const TemplateValues& v) {
  PathPattern p;
  std::string error;
  REQUIRE_MESSAGE(fill_path_template(tmpl, v, p, error), error);
  return p;
}

std::string refusal(const std::string& tmpl, const TemplateValues& v) {
  PathPattern p;
  std::string error;
  CHECK_FALSE(fill_path_template(tmpl, v, p, error));
  return error;
}

Attempt job(const std::string& work_dir) {
  Attempt a;
  a.key = "slurm/c1/42@1";
  a.context.scheduler = "slurm";
  a.cluster = "c1";
  a.context.workload_id = a.job_id = "42";
  a.user = "alice";
  a.context.nodes = {"n1"};
  a.work_dir = work_dir;
  a.context.start = *parse_rfc3339("2026-03-14T10:00:00Z");
  a.context.end = *parse_rfc3339("2026-03-14T11:00:00Z");
  return a;
}

Collected collect(const std::string& source, const std::string& tmpl, const std::string& host, const Attempt& a) {
  FilesCollectorConfig cfg;
  cfg.sources.push_back({source, tmpl, host, "auto", 1});
  CollectRequest req;
  req.attempt = &a;
  req.scope_start = a.context.start;
  req.scope_end = a.context.end;
  Collected out;
  FilesCollector(cfg).collect(req, out);
  return out;
}

bool any_error_has(const CollectorReport& r, const std::string& what) {
  for (const auto& e : r.errors)
    if (e.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("fill_path_template: the root is the literal prefix, with {work_dir} when the template starts with it") {
  TemplateValues v;
  v.work_dir = "/home/alice/run";
  v.node = "n1";
  v.job_id = "42";
  v.source = "kernel";
  v.date = "2026-03-14";
  PathPattern p = filled("{work_dir}/slurm-{job_id}.out", v);
  CHECK(p.text == "/home/alice/run/slurm-42.out");
  CHECK(p.glob == p.text);
  CHECK(p.root == "/home/alice/run");
  CHECK(filled("/var/log/{node}/kern.log*", v).root == "/var/log");
  CHECK(filled("/var/log/nodes/kern-{node}.log", v).root == "/var/log/nodes");
  CHECK(filled("/var/log/k*/{node}.log", v).root == "/var/log");
  CHECK(filled("/{node}/x", v).root == "/");
  CHECK(filled("/var/log/{source}-{date}.log", v).text == "/var/log/kernel-2026-03-14.log");
  v.work_dir = "/home/alice/run/";
  CHECK(filled("{work_dir}slurm.out", v).root == "/home/alice/run");
  v.work_dir = "/";
  CHECK(filled("{work_dir}slurm.out", v).root == "/");
}

TEST_CASE("fill_path_template: glob characters, '/', '..' and control characters in values are refused") {
  TemplateValues ok;
  ok.work_dir = "/home/alice/run";
  ok.node = "n1";
  ok.job_id = "42";
  ok.user = "alice";
  ok.cluster = "c1";
  auto with = [&](auto set) {
    TemplateValues v = ok;
    set(v);
    return v;
  };
  CHECK(refusal("{work_dir}/x", with([](auto& v) { v.work_dir = "/home/*"; })).find("{work_dir} value '/home/*' has a glob character") == 0);
  CHECK(refusal("{work_dir}/x", with([](auto& v) { v.work_dir = "/home/[ab]ob"; })).find("glob character") != std::string::npos);
  CHECK(refusal("{work_dir}/x", with([](auto& v) { v.work_dir = "home/alice"; })).find("is not an absolute path") != std::string::npos);
  CHECK(refusal("{work_dir}/x", with([](auto& v) { v.work_dir = "/home/alice/../bob"; })).find("'..' component") != std::string::npos);
  CHECK(refusal("{work_dir}/x", with([](auto& v) { v.work_dir = "/home/alice/.."; })).find("'..' component") != std::string::npos);
  CHECK(refusal("{work_dir}/x", with([](auto& v) { v.work_dir = ""; })).find("is empty") != std::string::npos);
  CHECK(refusal("/l/{node}", with([](auto& v) { v.node = "a/b"; })).find("{node} value 'a/b' has '/'") == 0);
  CHECK(refusal("/l/{node}", with([](auto& v) { v.node = ".."; })).find("relative directory") != std::string::npos);
  CHECK(refusal("/l/{job_id}", with([](auto& v) { v.job_id = "4?"; })).find("glob character") != std::string::npos);
  CHECK(refusal("/l/{user}", with([](auto& v) { v.user = "{a,b}"; })).find("glob character") != std::string::npos);
  CHECK(refusal("/l/{user}", with([](auto& v) { v.user = ""; })).find("{user} value '' is empty") == 0);
  std::string ctl = refusal("/l/{cluster}", with([](auto& v) { v.cluster = "c\n\x1b"; }));
  CHECK(ctl.find("{cluster} value 'c\\n\\x1b' has a control character") == 0);  // shown escaped
  // A placeholder the template does not use is not checked.
  CHECK(filled("/l/{node}", with([](auto& v) { v.user = "*"; })).text == "/l/n1");
}

TEST_CASE("files: a job's WorkDir link to another user's file is refused and reported, never read") {
  culprit::testing::TempDir dir;
  dir.write("bob/secret.log", "bob's secret line\n");
  fs::create_directories(dir.path() / "alice/run");
  fs::create_symlink(dir.path() / "bob/secret.log", dir.path() / "alice/run/slurm-42.out");
  Attempt a = job((dir.path() / "alice/run").string());
  Collected c = collect("app", "{work_dir}/slurm-{job_id}.out", "{batch_node}", a);
  CHECK(c.files.empty());
  CHECK(c.observations.empty());
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.collectors[0].status == "failed");
  CHECK(c.collectors[0].reason.find("1 file refused") != std::string::npos);
  CHECK(any_error_has(c.collectors[0], "slurm-42.out: refused: a symbolic link out of"));

  // A link that stays inside the directory is followed; the scanner gets the real path.
  dir.write("alice/run/logs/real.out", "hello\n");
  fs::remove(dir.path() / "alice/run/slurm-42.out");
  fs::create_symlink("logs/real.out", dir.path() / "alice/run/slurm-42.out");
  c = collect("app", "{work_dir}/slurm-{job_id}.out", "{batch_node}", a);
  REQUIRE(c.files.size() == 1);
  CHECK(c.files[0].display_path == (dir.path() / "alice/run/slurm-42.out").string());
  CHECK(c.files[0].path == fs::canonical(dir.path() / "alice/run/logs/real.out").string());
  CHECK(c.collectors[0].status == "ok");

  // A directory on the way that leads out is refused the same way.
  fs::create_directories(dir.path() / "logs");
  fs::create_directory_symlink(dir.path() / "bob", dir.path() / "logs/n1");
  dir.write("bob/kern.log", "bob's kernel line\n");
  c = collect("kernel", (dir.path() / "logs/{node}/kern.log").string(), "", a);
  CHECK(c.files.empty());
  CHECK(any_error_has(c.collectors[0], "refused: a symbolic link out of"));
}

TEST_CASE("files: a glob character in the WorkDir is refused, not expanded over other users' directories") {
  culprit::testing::TempDir dir;
  dir.write("bob/slurm-42.out", "bob's output\n");
  dir.write("carol/slurm-42.out", "carol's output\n");
  Attempt a = job((dir.path() / "*").string());
  Collected c = collect("app", "{work_dir}/slurm-{job_id}.out", "{batch_node}", a);
  CHECK(c.files.empty());
  CHECK(c.observations.empty());
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.collectors[0].status == "failed");
  CHECK(any_error_has(c.collectors[0], "{work_dir} value"));
  CHECK(any_error_has(c.collectors[0], "has a glob character"));
}

TEST_CASE("files: a FIFO is refused and reported, without blocking") {
  culprit::testing::TempDir dir;
  fs::create_directories(dir.path() / "n1");
  REQUIRE(mkfifo((dir.path() / "n1/kern.log").c_str(), 0600) == 0);
  Attempt a = job("/tmp");
  Collected c = collect("kernel", (dir.path() / "{node}/kern.log*").string(), "", a);
  CHECK(c.files.empty());
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.collectors[0].status == "failed");
  CHECK(c.collectors[0].reason.find("no file matches") == std::string::npos);
  CHECK(any_error_has(c.collectors[0], "kern.log: refused: a FIFO, not a regular file"));

  // Beside a regular file: that one is read, the FIFO still reported.
  dir.write("n1/kern.log.1", "2026-03-14T10:30:00Z n1 kernel: hello\n");
  c = collect("kernel", (dir.path() / "{node}/kern.log*").string(), "", a);
  CHECK(c.files.size() + c.observations.size() == 1);
  CHECK(c.collectors[0].status == "partial");
  CHECK(c.collectors[0].reason.find("(1 refused)") != std::string::npos);

  // open_confined on its own: refused before any open for reading.
  OpenedFile f = open_confined((dir.path() / "n1/kern.log").string(), dir.path().string());
  CHECK(f.outcome == OpenOutcome::kRefused);
  CHECK(f.fd == -1);
}

TEST_CASE("files: procfs files are refused, not read as 0 bytes and reported ok") {
  Attempt a = job("/tmp");
  Collected c = collect("ctl", "/proc/self/status", "ctl-01", a);
  CHECK(c.files.empty());
  CHECK(c.observations.empty());
  REQUIRE(c.collectors.size() == 1);
  CHECK(c.collectors[0].status == "failed");
  CHECK(any_error_has(c.collectors[0], "/proc/self/status: refused:"));

  // Through a link inside the template's directory, too.
  culprit::testing::TempDir dir;
  fs::create_directories(dir.path() / "n1");
  fs::create_symlink("/proc/self/status", dir.path() / "n1/kern.log");
  c = collect("kernel", (dir.path() / "{node}/kern.log").string(), "", a);
  CHECK(c.files.empty());
  CHECK(any_error_has(c.collectors[0], "refused: a symbolic link out of"));
  OpenedFile f = open_confined("/proc/self/status", "/proc/self");
  CHECK(f.outcome == OpenOutcome::kRefused);
  CHECK(f.why.find("/proc") != std::string::npos);
}

TEST_CASE("open_confined: a regular file is opened non-blocking; a directory is skipped") {
  culprit::testing::TempDir dir;
  auto p = dir.write("a/x.log", "x\n");
  OpenedFile f = open_confined(p.string(), dir.path().string());
  REQUIRE(f.outcome == OpenOutcome::kOpened);
  CHECK(S_ISREG(f.st.st_mode));
  CHECK(f.st.st_size == 2);
  CHECK(f.real_path == fs::canonical(p).string());
  close(f.fd);
  CHECK(open_confined((dir.path() / "a").string(), dir.path().string()).outcome == OpenOutcome::kDirectory);
  OpenedFile gone = open_confined((dir.path() / "a/none.log").string(), dir.path().string());
  CHECK(gone.outcome == OpenOutcome::kFailed);
  fs::create_symlink(dir.path() / "a/none.log", dir.path() / "a/dangling.log");
  CHECK(open_confined((dir.path() / "a/dangling.log").string(), dir.path().string()).why == "a symbolic link to nothing");
}
