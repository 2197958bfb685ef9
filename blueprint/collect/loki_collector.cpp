// Paging follows Loki's own contract for query_range: `start` inclusive,
// `end` exclusive, at most `limit` entries per answer in `direction`
// order across all streams (docs/sources/reference/loki-http-api.md). The
// next page starts at the last timestamp returned, so entries sharing that
// nanosecond are returned again and dropped here by (stream, time, line).
#include "blueprint/collect/loki_collector.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "base/timestamp.h"
#include "blueprint/config_reader.h"
#include "blueprint/task_pool.h"
#include "runtime/json_input.h"

namespace culprit::blueprint {

using json = nlohmann::json;

namespace {

// Requests of one attempt in flight at once: while one waits on the log
// store, others go on (a remote Loki answers in tens to hundreds of ms).
// The HttpClient bounds what all attempts together send (http_client.h).
constexpr size_t kQueriesAtOnce = 4;

std::string labels_text(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string s = "{";
  for (size_t i = 0; i < labels.size(); ++i)
    s += fmt::format("{}{}={}", i ? "," : "", labels[i].first, logql_quote(labels[i].second));
  return s + "}";
}

std::string label_value(const std::vector<std::pair<std::string, std::string>>& labels, const std::string& name) {
  for (const auto& [k, v] : labels)
    if (k == name) return v;
  return "";
}

struct SourceAcc {
  std::set<std::string> covered;
  std::set<std::string> failed;   // nodes whose query failed: their log is incomplete
  std::vector<std::string> errors;
  int64_t observations = 0, bytes = 0;
  bool pushed_down = false, unfiltered = false;
};

}  // namespace

std::string node_for_host(const std::string& value, const std::vector<std::string>& nodes) {
  if (std::binary_search(nodes.begin(), nodes.end(), value)) return value;
  std::string v = value;
  size_t colon = v.rfind(':');
  if (colon != std::string::npos && v.find(']') == std::string::npos && v.find_first_not_of("0123456789", colon + 1) == std::string::npos)
    v = v.substr(0, colon);
  if (std::binary_search(nodes.begin(), nodes.end(), v)) return v;
  size_t dot = v.find('.');
  if (dot != std::string::npos && std::binary_search(nodes.begin(), nodes.end(), v.substr(0, dot))) return v.substr(0, dot);
  return "";
}

std::string loki_query(const std::string& selector, const std::string& host_label, const std::vector<std::string>& hosts,
                       const std::string& line_filter, const std::string& extra_matcher) {
  std::string alt;
  for (const auto& h : hosts) alt += (alt.empty() ? "" : "|") + regex_escape(h);
  std::string matcher = fmt::format("{}=~{}", host_label, logql_quote("(?:" + alt + ")(?:[.:].*)?"));
  std::string inner = selector.substr(1, selector.size() - 2);
  bool empty = inner.find_first_not_of(" \t") == std::string::npos;
  if (!extra_matcher.empty()) matcher += ", " + extra_matcher;
  std::string q = "{" + inner + (empty ? "" : ", ") + matcher + "}";
  if (!line_filter.empty()) q += " |~ " + logql_quote(line_filter);
  return q;
}

bool parse_loki_streams(const std::string& body, std::vector<LokiEntry>& out, std::string& error) {
  json j;
  if (!parse_remote_json(body, j, error)) return false;
  if (string_member_or(j, "status") != "success") {
    error = fmt::format("status {}: {}", string_member_or(j, "status", "?"), string_member_or(j, "error", body.substr(0, 200)));
    return false;
  }
  const json& data = j["data"];
  if (!data.is_object() || string_member_or(data, "resultType") != "streams" || !data.contains("result") ||
      !data["result"].is_array()) {
    error = "the answer is not a streams result (a metric query?)";
    return false;
  }
  for (const auto& s : data["result"]) {
    std::vector<std::pair<std::string, std::string>> labels;
    if (s.contains("stream") && s["stream"].is_object())
      for (auto it = s["stream"].begin(); it != s["stream"].end(); ++it)
        if (it.value().is_string()) labels.emplace_back(it.key(), it.value().get<std::string>());
    std::sort(labels.begin(), labels.end());
    if (!s.contains("values") || !s["values"].is_array()) continue;
    for (const auto& v : s["values"]) {
      // [ "<ns>", "<line>" ] or, with categorized labels, [ "<ns>", "<line>", {metadata} ]
      if (!v.is_array() || v.size() < 2 || !v[0].is_string() || !v[1].is_string()) {
        error = "an entry is not [\"<nanoseconds>\", \"<line>\"]";
        return false;
      }
      LokiEntry e;
      e.labels = labels;
      const std::string& ts = v[0].get_ref<const std::string&>();
      char* end = nullptr;
      errno = 0;
      long long t = std::strtoll(ts.c_str(), &end, 10);
      if (ts.empty() || *end || errno) {
        error = fmt::format("entry timestamp '{}' is not nanoseconds since the epoch", ts);
        return false;
      }
      e.ts = t;
      e.line = v[1].get<std::string>();
      out.push_back(std::move(e));
    }
  }
  return true;
}

LokiCollector::LokiCollector(LokiCollectorConfig config, const std::string& token, const std::string& password)
    : config_(std::move(config)) {
  HttpClientConfig h;
  h.base_url = config_.url;
  set_http_access(config_.auth, config_.tls, token, password, h);
  if (!config_.tenant.empty()) h.headers.emplace_back("X-Scope-OrgID", config_.tenant);
  h.timeout_ns = config_.timeout;
  h.retries = config_.retries;
  h.max_in_flight = config_.max_in_flight;
  http_ = std::make_unique<HttpClient>(h);
}

void LokiCollector::collect(const CollectRequest& req, Collected& out) const {
  const Attempt& a = *req.attempt;
  std::map<std::string, SourceAcc> acc;
  auto wanted = [&](const std::string& s) { return req.wanted_sources.empty() || req.wanted_sources.count(s); };
  auto filter_for = [&](const std::string& s) -> const LineFilter* {
    if (!config_.push_down || !req.line_filters) return nullptr;
    auto it = req.line_filters->find(s);
    return it == req.line_filters->end() ? nullptr : &it->second;
  };
  using StreamKey = std::tuple<std::string, std::string, std::string>;  // (host, source, labels)
  using StreamLines = std::map<StreamKey, std::vector<std::pair<int64_t, std::string>>>;
  // What one job of requests found. Jobs run up to kQueriesAtOnce at once;
  // their findings are merged in job order, so the observations and the
  // report do not depend on which finished first.
  struct JobOut {
    std::map<std::string, SourceAcc> acc;  // errors, failed and covered nodes
    StreamLines lines;
    std::map<std::string, std::set<std::string>> tail_streams_of_node;  // a series job: the tail's streams by node
    bool failed = false;
    int64_t wire = 0;
  };
  // One query_range request: its entries, or why there are none usable.
  auto query_range = [&](JobOut& jo, const std::string& query, int64_t from, int64_t to, int64_t limit,
                         const char* direction, std::vector<LokiEntry>& entries, std::string& why) -> bool {
    std::string path = fmt::format("/loki/api/v1/query_range?query={}&start={}&end={}&limit={}&direction={}",
                                   HttpClient::escape(query), from, to, limit, direction);
    HttpResponse r = http_->get(path, req.stop);
    jo.wire += r.wire_bytes;
    std::string perr;
    if (r.ok() && parse_loki_streams(r.body, entries, perr)) return true;
    why = r.ok() ? perr : r.describe();
    return false;
  };
  auto stopped = [&] { return req.stop && req.stop->load(); };
  // Fixed sources are reported even when nothing comes back.
  for (const auto& st : config_.streams)
    if (!st.source.empty()) acc[st.source];
  std::map<std::string, std::string> not_read;  // source -> why
  if (!req.scope_start || !req.scope_end) {
    for (auto& [src, x] : acc) x.errors.push_back("the attempt has no time window: Loki needs one");
  } else {
    const int64_t s0 = *req.scope_start, s1 = *req.scope_end + 1;  // Loki's end is exclusive
    std::vector<std::vector<std::string>> batches;
    for (size_t i = 0; i < a.context.nodes.size(); i += static_cast<size_t>(config_.nodes_per_query))
      batches.emplace_back(a.context.nodes.begin() + static_cast<long>(i),
                           a.context.nodes.begin() + static_cast<long>(std::min(a.context.nodes.size(), i + config_.nodes_per_query)));
    // What each configured stream asks: its filters and the sources it feeds.
    struct StreamPlan {
      const LokiStreamConfig* st = nullptr;
      std::string host_label, filter, tail_filter, tail_matcher;
      std::vector<std::string> wanted_here;
      std::set<std::string> tail_sources;
      int64_t tail_lines = 0;
    };
    std::vector<StreamPlan> plans;
    for (const auto& st : config_.streams) {
      StreamPlan plan;
      plan.st = &st;
      plan.host_label = st.host_label.empty() ? config_.host_label : st.host_label;
      // Which sources this selector can feed, and the line filter for them.
      std::vector<std::string> sources;
      if (!st.source.empty()) sources.push_back(st.source);
      else if (!st.source_map.empty())
        for (const auto& [from, to] : st.source_map) sources.push_back(to);
      else if (req.line_filters)
        for (const auto& [src, f] : *req.line_filters) sources.push_back(src);
      for (const auto& s : sources)
        if (wanted(s)) plan.wanted_here.push_back(s);
      if (!st.source.empty() && !wanted(st.source)) {
        not_read[st.source] = fmt::format("not read: no extractor of the catalog reads source '{}'", st.source);
        continue;
      }
      if (!st.source_map.empty() && plan.wanted_here.empty()) continue;
      if (config_.push_down && req.line_filters && (!st.source.empty() || !st.source_map.empty() || !sources.empty())) {
        std::vector<const LineFilter*> fs;
        for (const auto& s : plan.wanted_here) fs.push_back(filter_for(s));
        LineFilter f = fs.empty() ? LineFilter{} : combine_filters(fs);
        plan.filter = f.regex;
        if (!plan.filter.empty()) {
          // The tail asks only the streams of sources that have one.
          std::string alt;
          for (const auto& s : plan.wanted_here) {
            const LineFilter* x = filter_for(s);
            if (!x || x->tail_regex.empty()) continue;
            plan.tail_sources.insert(s);
            alt += (alt.empty() ? "" : "|") + x->tail_regex.substr(4);
            plan.tail_lines = std::max(plan.tail_lines, x->tail_lines);
          }
          if (!alt.empty()) plan.tail_filter = "(?i)" + alt;
          if (!plan.tail_sources.empty() && st.source.empty() && !st.source_label.empty()) {
            std::set<std::string> values;
            for (const auto& [from, to] : st.source_map)
              if (plan.tail_sources.count(to)) values.insert(from);
            for (const auto& s : plan.tail_sources)
              if (!st.source_map.count(s)) values.insert(s);
            std::string v;
            for (const auto& x : values) v += (v.empty() ? "" : "|") + regex_escape(x);
            plan.tail_matcher = fmt::format("{}=~{}", st.source_label, logql_quote("(?:" + v + ")"));
          }
        }
      }
      plans.push_back(std::move(plan));
    }
    auto source_of = [](const StreamPlan& plan, const std::vector<std::pair<std::string, std::string>>& labels) -> std::string {
      const LokiStreamConfig& st = *plan.st;
      if (!st.source.empty()) return st.source;
      std::string v = label_value(labels, st.source_label);
      auto it = st.source_map.find(v);
      if (it != st.source_map.end()) return it->second;
      bool ok = !v.empty();
      for (char c : v) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
      return ok ? v : "";
    };
    // A failed request: every source the stream feeds lacks those nodes.
    auto failed_for = [](JobOut& jo, const StreamPlan& plan, const std::vector<std::string>& nodes, const std::string& error) {
      for (const auto& s : plan.wanted_here) {
        jo.acc[s].errors.push_back(error);
        jo.acc[s].failed.insert(nodes.begin(), nodes.end());
      }
      jo.failed = true;
    };
    // Coverage: the streams of a batch's nodes that exist in the window.
    auto series_job = [&](const StreamPlan& plan, const std::vector<std::string>& batch, JobOut& jo) {
      std::string form = form_encode({{"match[]", loki_query(plan.st->selector, plan.host_label, batch, "")},
                                      {"start", std::to_string(s0)},
                                      {"end", std::to_string(s1)}});
      HttpResponse r = http_->post_form("/loki/api/v1/series", form, req.stop);
      jo.wire += r.wire_bytes;
      json j;
      std::string parse_error;
      bool usable = r.ok() && parse_remote_json(r.body, j, parse_error) && string_member_or(j, "status") == "success" &&
                    j.contains("data") && j["data"].is_array();
      if (!usable) {
        std::string why = !r.ok() ? r.describe()
                          : parse_error.empty() ? "the series answer is not a list"
                                                : "the series answer is not usable: " + parse_error;
        failed_for(jo, plan, batch, fmt::format("series of {} for {}: {}", plan.st->selector, fmt::join(batch, ","), why));
        return;
      }
      for (const auto& ls : j["data"]) {
        std::vector<std::pair<std::string, std::string>> labels;
        if (ls.is_object())
          for (auto it = ls.begin(); it != ls.end(); ++it)
            if (it.value().is_string()) labels.emplace_back(it.key(), it.value().get<std::string>());
        std::string node = node_for_host(label_value(labels, plan.host_label), a.context.nodes);
        std::string src = source_of(plan, labels);
        if (!node.empty() && !src.empty() && wanted(src)) jo.acc[src].covered.insert(node);
        if (!node.empty() && plan.tail_sources.count(src)) jo.tail_streams_of_node[node].insert(labels_text(labels));
      }
    };
    // The lines of a batch's nodes in one time chunk, page after page.
    auto chunk_job = [&](const StreamPlan& plan, const std::vector<std::string>& batch, int64_t c0, JobOut& jo) {
      const int64_t c1 = std::min(s1, c0 + config_.chunk);
      const std::string query = loki_query(plan.st->selector, plan.host_label, batch, plan.filter);
      int64_t start = c0;
      std::set<std::tuple<std::string, int64_t, std::string>> boundary;  // entries at `start` already taken
      for (int page = 0;; ++page) {
        if (stopped()) return;
        std::vector<LokiEntry> entries;
        std::string why;
        if (!query_range(jo, query, start, c1, config_.limit, "forward", entries, why)) {
          failed_for(jo, plan, batch, fmt::format("{} [{}, {}) for {}: {}", plan.st->selector, format_rfc3339(c0),
                                                  format_rfc3339(c1), fmt::join(batch, ","), why));
          return;
        }
        int64_t last = start;
        size_t fresh = 0;
        std::set<std::tuple<std::string, int64_t, std::string>> at_last;
        for (auto& e : entries) {
          std::string key = labels_text(e.labels);
          auto id = std::make_tuple(key, e.ts, e.line);
          if (e.ts == start && boundary.count(id)) continue;  // seen on the previous page
          ++fresh;
          if (e.ts > last) {
            last = e.ts;
            at_last.clear();
          }
          if (e.ts == last) at_last.insert(id);
          std::string node = node_for_host(label_value(e.labels, plan.host_label), a.context.nodes);
          std::string src = source_of(plan, e.labels);
          if (node.empty() || src.empty() || !wanted(src)) continue;
          if (!e.line.empty() && e.line.back() != '\n') e.line += '\n';
          jo.lines[{node, src, key}].emplace_back(e.ts, std::move(e.line));
        }
        if (static_cast<int>(entries.size()) < config_.limit) return;  // the chunk is complete
        if (fresh == 0) {
          failed_for(jo, plan, batch, fmt::format("{}: more than {} entries share the nanosecond {}; raise collectors.loki.limit",
                                                  plan.st->selector, config_.limit, start));
          return;
        }
        if (last == start) boundary.insert(at_last.begin(), at_last.end());
        else boundary = std::move(at_last);
        start = last;
      }
    };
    // The tail: newest first, `tail_lines` per stream, one query for the
    // batch. An answer that is not full holds every stream's newest lines.
    // A full one holds the newest lines of all the batch's streams
    // together, so a stream with `tail_lines` or more in it has its own
    // newest ones, and only a node with a stream that got fewer (crowded
    // out by busier ones) is asked again on its own.
    auto tail_job = [&](const StreamPlan& plan, const std::vector<std::string>& batch,
                        const std::map<std::string, std::set<std::string>>& tail_streams_of_node, JobOut& jo) {
      auto tail_query = [&](const std::vector<std::string>& hosts, int64_t streams_n, std::map<std::string, int64_t>* got) -> bool {
        const int64_t limit = std::min<int64_t>(plan.tail_lines * std::max<int64_t>(1, streams_n), config_.limit);
        std::vector<LokiEntry> entries;
        std::string why;
        if (!query_range(jo, loki_query(plan.st->selector, plan.host_label, hosts, plan.tail_filter, plan.tail_matcher), s0,
                         s1, limit, "backward", entries, why)) {
          for (const auto& s : plan.tail_sources) {
            jo.acc[s].errors.push_back(fmt::format("{}: the newest {} progress lines for {}: {}", plan.st->selector, limit,
                                                   fmt::join(hosts, ","), why));
            jo.acc[s].failed.insert(hosts.begin(), hosts.end());
          }
          return false;
        }
        for (auto& e : entries) {
          std::string node = node_for_host(label_value(e.labels, plan.host_label), a.context.nodes);
          std::string src = source_of(plan, e.labels);
          if (node.empty() || src.empty() || !wanted(src)) continue;
          std::string key = labels_text(e.labels);
          if (got) ++(*got)[key];
          if (!e.line.empty() && e.line.back() != '\n') e.line += '\n';
          jo.lines[{node, src, key}].emplace_back(e.ts, std::move(e.line));
        }
        return static_cast<int64_t>(entries.size()) >= limit;  // full
      };
      int64_t batch_streams = 0;
      for (const auto& [n, keys] : tail_streams_of_node) batch_streams += static_cast<int64_t>(keys.size());
      std::map<std::string, int64_t> got;
      if (tail_query(batch, batch_streams, &got) && batch.size() > 1) {
        for (const auto& [n, keys] : tail_streams_of_node) {
          bool short_one = std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
            auto it = got.find(k);
            return it == got.end() || it->second < plan.tail_lines;
          });
          if (!short_one) continue;
          for (const auto& k : keys)  // asked again: the first answer's lines of it go
            for (auto& [tk, v] : jo.lines)
              if (std::get<0>(tk) == n && std::get<2>(tk) == k) v.clear();
          tail_query({n}, static_cast<int64_t>(keys.size()), nullptr);
        }
      }
    };
    // First every batch's series and chunks (independent of each other),
    // then the tails (which need the series and no failure).
    struct Job {
      size_t plan = 0, batch = 0;
      std::optional<int64_t> chunk;  // unset: the batch's series
    };
    std::vector<Job> jobs;
    for (size_t p = 0; p < plans.size(); ++p)
      for (size_t b = 0; b < batches.size(); ++b) {
        jobs.push_back({p, b, std::nullopt});
        for (int64_t c0 = s0; c0 < s1; c0 += config_.chunk) jobs.push_back({p, b, c0});
      }
    std::vector<JobOut> outs(jobs.size());
    for_each_at_once(jobs.size(), kQueriesAtOnce, [&](size_t i) {
      if (stopped()) return;
      const Job& job = jobs[i];
      if (job.chunk) chunk_job(plans[job.plan], batches[job.batch], *job.chunk, outs[i]);
      else series_job(plans[job.plan], batches[job.batch], outs[i]);
    });
    // Per (plan, batch): its series job's index, and whether any request of it failed.
    std::map<std::pair<size_t, size_t>, size_t> series_of;
    std::set<std::pair<size_t, size_t>> batch_failed;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (!jobs[i].chunk) series_of[{jobs[i].plan, jobs[i].batch}] = i;
      if (outs[i].failed) batch_failed.insert({jobs[i].plan, jobs[i].batch});
    }
    std::vector<std::pair<size_t, size_t>> tail_todo;
    for (const auto& [pb, i] : series_of) {
      const StreamPlan& plan = plans[pb.first];
      if (!plan.tail_filter.empty() && plan.tail_lines > 0 && !batch_failed.count(pb) && !outs[i].tail_streams_of_node.empty())
        tail_todo.push_back(pb);
    }
    std::vector<JobOut> tail_outs(tail_todo.size());
    for_each_at_once(tail_todo.size(), kQueriesAtOnce, [&](size_t i) {
      if (stopped()) return;
      const auto& [p, b] = tail_todo[i];
      tail_job(plans[p], batches[b], outs[series_of.at(tail_todo[i])].tail_streams_of_node, tail_outs[i]);
    });
    // Merged in job order: a stream's lines come from its batch's chunks in
    // time order (and are sorted by time below in any case).
    std::map<StreamKey, std::vector<std::pair<int64_t, std::string>>> streams, tails;
    auto merge = [&](JobOut& jo, StreamLines& into) {
      out.wire_bytes += jo.wire;
      for (auto& [src, x] : jo.acc) {
        SourceAcc& to = acc[src];
        to.covered.insert(x.covered.begin(), x.covered.end());
        to.failed.insert(x.failed.begin(), x.failed.end());
        for (auto& e : x.errors) to.errors.push_back(std::move(e));
      }
      for (auto& [k, v] : jo.lines) {
        auto& dst = into[k];
        for (auto& x : v) dst.push_back(std::move(x));
      }
    };
    for (auto& jo : outs) merge(jo, streams);
    for (auto& jo : tail_outs) merge(jo, tails);
    for (const auto& plan : plans)
      for (const auto& s : plan.wanted_here) {
        if (!plan.filter.empty()) acc[s].pushed_down = true;
        else acc[s].unfiltered = true;
      }
    auto by_time = [](const auto& x, const auto& y) { return x.first < y.first; };
    for (auto& [key, tail] : tails) {
      auto& entries = streams[key];
      std::stable_sort(entries.begin(), entries.end(), by_time);
      const size_t main_n = entries.size();
      for (auto& te : tail) {
        // A line both filters took (it holds atoms of both) came back twice.
        auto [lo, hi] = std::equal_range(entries.begin(), entries.begin() + static_cast<long>(main_n), te, by_time);
        if (std::none_of(lo, hi, [&](const auto& me) { return me.second == te.second; })) entries.push_back(std::move(te));
      }
    }
    for (auto& [key, entries] : streams) {
      const auto& [node, src, labels] = key;
      std::stable_sort(entries.begin(), entries.end(), by_time);
      int64_t n = 0, offset = 0;
      for (auto& [ts, line] : entries) {
        Observation o;
        o.host = node;
        o.source = src;
        o.file = "loki:" + labels;
        o.line = ++n;
        o.offset = offset;
        offset += static_cast<int64_t>(line.size());
        o.ts = ts;
        acc[src].bytes += static_cast<int64_t>(line.size());
        ++acc[src].observations;
        acc[src].covered.insert(node);
        o.text = std::move(line);
        out.observations.push_back(std::move(o));
      }
    }
  }
  for (const auto& [src, why] : not_read) {
    if (acc.count(src) && (acc[src].observations || !acc[src].covered.empty())) continue;
    CollectorReport rep;
    rep.collector = "loki";
    rep.source = src;
    rep.nodes_expected = a.context.nodes;
    rep.status = "empty";
    rep.reason = why;
    out.collectors.push_back(std::move(rep));
    acc.erase(src);
  }
  for (auto& [src, x] : acc) {
    CollectorReport rep;
    rep.collector = "loki";
    rep.source = src;
    rep.nodes_expected = a.context.nodes;
    for (const auto& n : x.failed) x.covered.erase(n);
    for (const auto& n : a.context.nodes)
      if (x.covered.count(n)) rep.nodes_covered.push_back(n);
    rep.observations = x.observations;
    rep.bytes = x.bytes;
    out.bytes += x.bytes;
    std::sort(x.errors.begin(), x.errors.end());
    rep.errors = x.errors;
    std::vector<std::string> missing;
    for (const auto& n : a.context.nodes)
      if (!x.covered.count(n)) missing.push_back(n);
    if (req.stop && req.stop->load()) {
      rep.status = "partial";
      rep.reason = "stopped before every page was read";
    } else if (rep.nodes_covered.empty()) {
      rep.status = x.errors.empty() ? "empty" : "failed";
      rep.reason = x.errors.empty() ? fmt::format("no stream of any of the {} nodes in the window", a.context.nodes.size())
                                    : fmt::format("nothing could be read ({} error{})", x.errors.size(), x.errors.size() == 1 ? "" : "s");
    } else if (!missing.empty()) {
      rep.status = "partial";
      rep.reason = fmt::format("no complete {} log in the window for {} of {} nodes: {}", src, missing.size(), a.context.nodes.size(),
                               fmt::join(missing, ", "));
    } else if (!x.errors.empty()) {
      rep.status = "partial";
      rep.reason = fmt::format("{} quer{} failed", x.errors.size(), x.errors.size() == 1 ? "y" : "ies");
    }
    out.collectors.push_back(std::move(rep));
  }
}

// Configuration: the `collectors.loki` section (blueprint/connector.h). It lives here,
// with the code that uses it, so that the connector is one file.

namespace {

// A LogQL stream selector: `{...}` and nothing after it.
bool stream_selector_ok(const std::string& s) {
  if (s.size() < 2 || s.front() != '{') return false;
  bool in_str = false;
  char quote = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (in_str) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) in_str = false;
    } else if (c == '"' || c == '`') {
      in_str = true;
      quote = c;
    } else if (c == '}') {
      return i == s.size() - 1;
    }
  }
  return false;
}

}  // namespace

std::string LokiCollectorConfig::summary() const {
  return fmt::format("{} stream{}", streams.size(), streams.size() == 1 ? "" : "s");
}

std::shared_ptr<ConnectorConfig> read_loki_collector_config(ConfigReader& r, const YAML::Node& n) {
  auto config = std::make_shared<LokiCollectorConfig>();
  LokiCollectorConfig& out = *config;
  r.require(n, "collectors.loki", {"url", "streams"});
  std::vector<std::string> keys = {"url", "tenant", "host_label", "streams", "push_down", "limit", "chunk",
                                   "nodes_per_query", "timeout", "retries", "max_in_flight", "tls"};
  keys.insert(keys.end(), auth_keys().begin(), auth_keys().end());
  r.map(n, "collectors.loki", keys, [&](const std::string& k, const YAML::Node& v) {
    if (read_auth(r, k, v, out.auth)) return;
    if (k == "url") http_url(r, v, k, out.url);
    else if (k == "tenant") r.string(v, k, out.tenant);
    else if (k == "host_label") r.string(v, k, out.host_label);
    else if (k == "push_down") r.boolean(v, k, out.push_down);
    else if (k == "limit") {
      int64_t x = 0;
      if (r.integer(v, k, x, 1, 1000000)) out.limit = static_cast<int>(x);
    } else if (k == "chunk") r.duration(v, k, out.chunk, 60LL * 1000000000);
    else if (k == "nodes_per_query") {
      int64_t x = 0;
      if (r.integer(v, k, x, 1, 10000)) out.nodes_per_query = static_cast<int>(x);
    } else if (k == "timeout") r.duration(v, k, out.timeout, 1000000000LL);
    else if (k == "retries") {
      int64_t x = 0;
      if (r.integer(v, k, x, 0, 20)) out.retries = static_cast<int>(x);
    } else if (k == "max_in_flight") {
      int64_t x = 0;
      if (r.integer(v, k, x, 1, 256)) out.max_in_flight = static_cast<int>(x);
    } else if (k == "tls") read_tls(r, v, "collectors.loki.tls", out.tls);
    else if (k == "streams") {
      if (!v.IsSequence()) {
        r.error("B0103", v, "'streams' must be a list of {selector, source} entries");
        return;
      }
      for (const auto& e : v) {
        LokiStreamConfig st;
        st.line = e.Mark().line + 1;
        r.require(e, "collectors.loki.streams[]", {"selector"});
        r.map(e, "collectors.loki.streams[]", {"selector", "source", "source_label", "source_map", "host_label"},
              [&](const std::string& kk, const YAML::Node& x) {
                if (kk == "selector") {
                  if (r.string(x, kk, st.selector) && !stream_selector_ok(st.selector))
                    r.error("B0104", x, "'selector' must be a LogQL stream selector such as {job=\"node-logs\"} "
                                        "(no pipeline: the line filter is added by the collector)");
                } else if (kk == "source") {
                  if (r.string(x, kk, st.source) && !source_name_ok(st.source))
                    r.error("B0104", x, "'source' must be a lowercase name ([a-z0-9_-]+), such as kernel or app");
                } else if (kk == "source_label") r.string(x, kk, st.source_label);
                else if (kk == "host_label") r.string(x, kk, st.host_label);
                else if (kk == "source_map") {
                  if (!x.IsMap()) {
                    r.error("B0103", x, "'source_map' must map label values to source names");
                    return;
                  }
                  for (auto it = x.begin(); it != x.end(); ++it) {
                    const YAML::Node from_node = it->first;
                    if (!from_node.IsScalar() || from_node.Scalar() == "<<") {
                      r.error("B0103", from_node, "the keys of 'source_map' must be label values");
                      continue;
                    }
                    std::string from = from_node.Scalar(), to;
                    if (st.source_map.count(from)) {
                      r.error("B0108", from_node, fmt::format("'{}' is given twice in 'source_map'", from));
                      continue;
                    }
                    if (!r.string(it->second, from, to)) continue;
                    if (!source_name_ok(to)) r.error("B0104", it->second, fmt::format("'{}' is not a source name ([a-z0-9_-]+)", to));
                    st.source_map[from] = to;
                  }
                }
              });
        if (st.source.empty() == st.source_label.empty())
          r.error("B0105", e, "a stream needs exactly one of 'source' (a fixed source) and 'source_label' (a label naming it)");
        if (!st.source_map.empty() && st.source_label.empty())
          r.error("B0104", e, "'source_map' applies only with 'source_label'");
        if (!st.selector.empty()) out.streams.push_back(std::move(st));
      }
    }
  });
  return config;
}

bool make_loki_collector(const ConnectorConfig& config, const ConnectorEnv&, ConnectorParts& out, std::string& error) {
  const auto& c = static_cast<const LokiCollectorConfig&>(config);
  std::string token, password;
  if (!read_http_credentials(c.auth, "collectors.loki", token, password, error)) return false;
  out.collector = std::make_unique<LokiCollector>(c, token, password);
  return true;
}

}  // namespace culprit::blueprint
