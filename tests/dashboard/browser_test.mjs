// Drives a running dashboard in the system's headless Chromium (Debian's
// /usr/bin/chromium, through puppeteer-core) the way an operator uses it, and
// writes a screenshot of each page. Run by check_browser.sh:
//
//   node browser_test.mjs BASE_URL SCREENSHOT_DIR EXPECT_JSON
//
// EXPECT_JSON: {"total": N, "job": "48213-by-template", "cause": "hardware / nvlink.signal_integrity",
//               "culprit": "node-02", "first_day": "YYYY-MM-DD", "last_day": "YYYY-MM-DD"}
// Exits 0 when every check passed; otherwise prints the failures and exits 1.
import fs from "node:fs";
import path from "node:path";
import puppeteer from "puppeteer-core";

const [base, outDir, expectText] = process.argv.slice(2);
if (!base || !outDir || !expectText) {
  console.error("usage: node browser_test.mjs BASE_URL SCREENSHOT_DIR EXPECT_JSON");
  process.exit(2);
}
const expect = JSON.parse(expectText);
fs.mkdirSync(outDir, { recursive: true });

const failures = [];
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--window-size=1280,900"],
});
const requests = [];   // every request any page made: method and URL
const problems = [];   // script errors, CSP violations, failed loads
async function newPage({ javascript = true, dark = false } = {}) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  await page.setJavaScriptEnabled(javascript);
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: dark ? "dark" : "light" }]);
  page.on("request", (r) => requests.push(`${r.method()} ${r.url()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  return page;
}
async function shot(page, name) {
  const file = path.join(outDir, name);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
// WCAG contrast of every visible text element of the page (not SVG: the
// charts' numbers are in tables too): 4.5:1, or 3:1 for large text.
async function contrast(page, where) {
  const low = await page.evaluate(() => {
    function rgba(s) { const m = s.match(/[\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; }
    function lum(c) {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
      return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
    }
    function background(e) {
      for (; e; e = e.parentElement) {
        const c = rgba(getComputedStyle(e).backgroundColor);
        if (c.a > 0.5) return c;
      }
      return rgba(getComputedStyle(document.documentElement).backgroundColor || "rgb(255,255,255)");
    }
    const out = [];
    let n = 0;
    for (const e of document.querySelectorAll("body *")) {
      if (e.closest("svg") || !e.getClientRects().length) continue;
      const own = Array.prototype.some.call(e.childNodes, (n) => n.nodeType === 3 && n.textContent.trim());
      if (!own) continue;
      const st = getComputedStyle(e);
      if (st.visibility === "hidden" || Number(st.opacity) === 0 || e.closest(".sr-only, .skip")) continue;
      const fg = rgba(st.color), bg = background(e);
      n++;
      const a = lum(fg) + 0.05, b = lum(bg) + 0.05, ratio = Math.max(a, b) / Math.min(a, b);
      const size = parseFloat(st.fontSize), bold = Number(st.fontWeight) >= 700;
      const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
      if (ratio < need) out.push(`${e.tagName.toLowerCase()}.${e.className} "${e.textContent.trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
    }
    return { out, n };
  });
  check(low.n > 20 && low.out.length === 0,
        `${where}: all ${low.n} texts have WCAG AA contrast${low.out.length ? " (" + low.out.slice(0, 5).join("; ") + ")" : ""}`);
}
const text = (page, sel) => page.$eval(sel, (e) => e.textContent.replace(/\s+/g, " ").trim());
const rowJobs = (page) => page.$$eval("#workloads tbody tr td.job a", (as) => as.map((a) => a.textContent.trim()));

try {
  // --- the list
  const page = await newPage();
  await page.goto(`${base}/workloads?per_page=100`, { waitUntil: "networkidle0" });
  let jobs = await rowJobs(page);
  check(jobs.length === expect.total, `the list shows every verdict (${jobs.length} rows, want ${expect.total})`);
  check((await text(page, "#result")).includes(`of ${expect.total} verdicts`), "the list says how many verdicts match");
  await shot(page, "list.png");
  await contrast(page, "the list");

  // Keyboard: "/" jumps to the job-id search.
  await page.keyboard.press("/");
  check(await page.evaluate(() => document.activeElement && document.activeElement.id === "f-q"), "'/' focuses the job-id search");

  // A filter narrows it: a job-id prefix, then a status; the URL carries both.
  const prefix = expect.job.split("-")[0];
  await page.type("#f-q", prefix);
  await Promise.all([page.waitForNavigation({ waitUntil: "networkidle0" }), page.keyboard.press("Enter")]);
  jobs = await rowJobs(page);
  check(jobs.length > 0 && jobs.length < expect.total && jobs.every((j) => j.startsWith(prefix)),
        `the job-id search narrows the list to ids starting with ${prefix} (${jobs.join(", ")})`);
  check(new URL(page.url()).search === `?q=${prefix}&per_page=100`, `the URL carries the search, and only what is set (${page.url()})`);
  await page.goto(`${base}/workloads?per_page=100`, { waitUntil: "networkidle0" });
  await page.click("input[name=status][value=unattributed]");
  await Promise.all([page.waitForNavigation({ waitUntil: "networkidle0" }), page.click("form.filters button[type=submit]")]);
  const statuses = await page.$$eval("#workloads tbody tr .badge", (bs) => bs.map((b) => b.textContent.trim()));
  check(statuses.length > 0 && statuses.length < expect.total && statuses.every((s) => s === "Unattributed"),
        `the status filter keeps only unattributed verdicts (${statuses.length})`);
  check(page.url().includes("status=unattributed"), "the URL carries the status filter");
  await shot(page, "list-filtered.png");

  // Sorting by a column header, then a culprit node's link narrows to the jobs it was blamed for.
  await page.goto(`${base}/workloads?per_page=100`, { waitUntil: "networkidle0" });
  await Promise.all([page.waitForNavigation(), page.click("thead th a[href*='sort=workload']")]);
  jobs = await rowJobs(page);
  check(jobs.length === expect.total && jobs.every((j, i) => i === 0 || jobs[i - 1] <= j), "sorting by job id orders the rows");
  await Promise.all([page.waitForNavigation(), page.click(`a[href*='node=${expect.culprit}'][href*='role=culprit']`)]);
  check((await text(page, "#result")).includes(`culprit node ${expect.culprit}`), `a culprit link lists the verdicts blaming ${expect.culprit}`);

  // --- one workload: root cause, cascade with demoted symptoms and their evidence, timeline
  await page.goto(`${base}/workloads?q=${encodeURIComponent(expect.job)}`, { waitUntil: "networkidle0" });
  await Promise.all([page.waitForNavigation({ waitUntil: "networkidle0" }), page.click("#workloads tbody tr td.job a")]);
  await page.waitForSelector("[data-chart=timeline][data-rendered]", { timeout: 10000 });
  check((await text(page, "h1")).includes(expect.job), "the workload page is the job's");
  check((await text(page, "section.outcome h2")).includes(expect.cause), `the root cause is ${expect.cause}`);
  check((await text(page, "section.outcome .culprits")).includes(expect.culprit), `the culprit node is ${expect.culprit}`);
  const demoted = await page.$$("#cascade li.sym-demoted");
  check(demoted.length > 0, `the cascade shows the demoted symptoms (${demoted.length})`);
  const nested = await page.$$("#cascade li.root ul li.sym-demoted");
  check(nested.length > 0, `demoted symptoms hang under the root cause (${nested.length})`);
  // Open a demoted symptom with the keyboard: its evidence has file:line and a time.
  const summary = await page.$("#cascade li.sym-demoted > details > summary");
  await summary.focus();
  await page.keyboard.press("Enter");
  const ev = await page.$eval("#cascade li.sym-demoted > details[open] table.evidence tbody tr", (tr) => ({
    where: tr.querySelector("td.where code").textContent,
    time: tr.querySelector("time") ? tr.querySelector("time").getAttribute("datetime") : "",
    line: tr.querySelector("code.line").textContent,
  }));
  check(/\S+:\d+$/.test(ev.where) && ev.time.length > 0 && ev.line.length > 0,
        `a demoted symptom's evidence line has file:line and a time (${ev.where} ${ev.time})`);
  const change = await text(page, "#cascade li.sym-demoted .change");
  check(/demoted by \S+: \S/.test(change), `a demotion names its rule and reason (${change.slice(0, 80)})`);
  const tl = await page.$eval("[data-chart=timeline]", (b) => ({
    n: Number(b.getAttribute("data-rendered")), cause: b.querySelectorAll(".tl-cause").length,
    rows: b.querySelectorAll(".tl-row").length }));
  check(tl.n > 0 && tl.cause > 0 && tl.rows > 1, `the timeline draws symptoms per node with the cause marked (${JSON.stringify(tl)})`);
  // The time axis: ticks at round instants, evenly spaced, one step apart.
  const ticks = await page.$$eval("[data-chart=timeline] svg .axis text", (ts) =>
    ts.map((t) => ({ x: Number(t.getAttribute("x")), label: t.textContent })));
  const seconds = ticks.map((t) => t.label.split(":").reduce((acc, v) => acc * 60 + Number(v), 0));
  const gapsX = ticks.slice(1).map((t, i) => t.x - ticks[i].x), gapsT = seconds.slice(1).map((v, i) => v - seconds[i]);
  check(ticks.length >= 3 && gapsX.every((g) => Math.abs(g - gapsX[0]) < 0.5) && gapsT.every((g) => g === gapsT[0] && g > 0) &&
        [1, 2, 5, 10, 15, 30].includes(gapsT[0] % 60 === 0 ? gapsT[0] / 60 : gapsT[0]),
        `the timeline's axis ticks are round and even (${ticks.map((t) => t.label).join(" ")})`);
  check((await page.$$("section[aria-labelledby=coverage-h] li, section[aria-labelledby=coverage-h] p")).length > 0, "coverage is told");
  await shot(page, "workload.png");
  await contrast(page, "the workload page");
  const json = await page.$eval("a[href$='/verdict.json']", (a) => a.href);
  const verdict = await page.evaluate(async (u) => (await fetch(u)).json(), json);
  check(verdict.schema === "culprit.verdict/v2" && verdict.status === "attributed", "the verdict JSON link gives the verdict");
  const todo = await text(page, "section[aria-labelledby=recommend-h]");
  check(/Restart the job without node-02/.test(todo) && /Drain node-02/.test(todo) && /Inspect the links of/.test(todo) &&
        !/inspect_link|restart_excluding/.test(todo),
        `"What to do" shows the recommendation (${todo.slice(0, 80)})`);
  const workloadUrl = page.url();

  // --- the fleet view over the whole store
  await page.goto(`${base}/fleet?from=${expect.first_day}&to=${expect.last_day}&min=1`, { waitUntil: "networkidle0" });
  await page.waitForSelector("[data-chart=stacked][data-rendered]", { timeout: 10000 });
  await page.waitForSelector("[data-chart=share][data-rendered]", { timeout: 10000 });
  const bars = await page.$eval("[data-chart=stacked]", (b) => ({ n: Number(b.getAttribute("data-rendered")), rects: b.querySelectorAll("rect.bar").length }));
  check(bars.n > 0 && bars.rects === bars.n, `the stacked bars render (${bars.rects} bars)`);
  const dots = await page.$eval("[data-chart=share]", (b) => b.querySelectorAll("circle").length);
  check(dots > 0, `the unattributed share renders (${dots} points)`);
  const offenders = await page.$$eval("#offenders tbody tr th", (ths) => ths.map((t) => t.textContent.trim()));
  check(offenders.includes(expect.culprit), `repeat offenders list ${expect.culprit} (${offenders.join(", ")})`);
  await shot(page, "fleet.png");
  await contrast(page, "the fleet view");

  // --- dark mode
  const dark = await newPage({ dark: true });
  await dark.goto(workloadUrl, { waitUntil: "networkidle0" });
  const bg = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const lum = bg.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b, 0) / 765;
  check(lum < 0.3, `prefers-color-scheme: dark gives a dark page (${bg})`);
  await shot(dark, "workload-dark.png");
  await contrast(dark, "the workload page, dark");
  await dark.goto(`${base}/fleet?from=${expect.first_day}&to=${expect.last_day}&min=1`, { waitUntil: "networkidle0" });
  await contrast(dark, "the fleet view, dark");
  await dark.goto(`${base}/workloads?per_page=100`, { waitUntil: "networkidle0" });
  await contrast(dark, "the list, dark");

  // --- without JavaScript the list and the workload page still read
  const nojs = await newPage({ javascript: false });
  await nojs.goto(`${base}/workloads?per_page=100`, { waitUntil: "networkidle0" });
  check((await rowJobs(nojs)).length === expect.total, "without JavaScript the list is complete");
  await nojs.goto(workloadUrl, { waitUntil: "networkidle0" });
  check((await text(nojs, "section.outcome h2")).includes(expect.cause), "without JavaScript the workload page names the cause");
  check((await nojs.$$("details.data table tbody tr")).length > 0, "without JavaScript the timeline is a table");

  // --- the screenshots are pictures, not blank pages
  const checker = await newPage();
  for (const name of ["list.png", "list-filtered.png", "workload.png", "fleet.png", "workload-dark.png"]) {
    const file = path.join(outDir, name);
    const data = fs.readFileSync(file).toString("base64");
    const stats = await checker.evaluate(async (b64) => {
      const img = new Image();
      img.src = "data:image/png;base64," + b64;
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width; c.height = img.height;
      const g = c.getContext("2d");
      g.drawImage(img, 0, 0);
      const px = g.getImageData(0, 0, c.width, c.height).data;
      const counts = new Map();
      for (let i = 0; i < px.length; i += 4 * 7) {  // every 7th pixel
        const k = (px[i] >> 3) << 10 | (px[i + 1] >> 3) << 5 | (px[i + 2] >> 3);
        counts.set(k, (counts.get(k) || 0) + 1);
      }
      const total = px.length / 28, top = Math.max(...counts.values());
      return { width: img.width, height: img.height, colors: counts.size, other: 1 - top / total };
    }, data);
    check(stats.width >= 1000 && stats.colors > 30 && stats.other > 0.05,
          `${name} has content (${stats.width}x${stats.height}, ${stats.colors} colours, ${(stats.other * 100).toFixed(1)} % not background)`);
  }

  // --- no request the pages made could write, and nothing failed
  const writes = requests.filter((r) => !r.startsWith("GET ") && !r.startsWith("HEAD "));
  check(writes.length === 0, `every request was a GET (${requests.length} requests${writes.length ? "; " + writes.join(", ") : ""})`);
  const foreign = requests.filter((r) => !r.split(" ")[1].startsWith(base) && !r.split(" ")[1].startsWith("data:"));
  check(foreign.length === 0, `no request left the dashboard (${foreign.join(", ")})`);
  check(problems.length === 0, `no script error, CSP violation or failed load (${problems.join("; ")})`);
} catch (e) {
  check(false, `unexpected: ${e.stack || e}`);
} finally {
  await browser.close();
}
console.log(failures.length ? `browser_test: ${failures.length} check(s) failed` : "browser_test: all checks passed");
process.exit(failures.length ? 1 : 0);
