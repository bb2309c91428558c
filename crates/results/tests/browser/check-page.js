// Loads a pgbench-report page in headless Chromium, driven over the DevTools
// protocol on a pipe (--remote-debugging-pipe: no port, no WebSocket library), and
// reports on stdout, one fact a line:
//   request URL               every request the page made (the page itself included)
//   console LEVEL TEXT        console messages and log entries of level error/warning
//   exception TEXT            uncaught exceptions
//   chart ID coloured=N dark_left=N dark_bottom=N colours=N,N,...
//       pixels of a full-page screenshot: saturated (series) pixels inside the plot
//       area, dark (text) pixels in the strips left of and below it (axis labels),
//       and pixels near each palette colour inside the plot area
//   mark ID KIND pixels=N area=N
//       pixels near a mark's colour (the warm-up's shading, a checkpoint's line)
//   marktop ID KIND series=N
//       saturated (series) pixels in the upper half of the mark's box
//       in its box on the chart
//   label ID {"text":...,"left":...,"top":...,"width":...,"height":...}
//       where a mark's name (a sweep's peak or knee, ...) was drawn on the page
//   drawn N                   charts the page says it drew
//   data ID [[x...],[y...]...] the values a chart plots (uPlot's aligned data)
//   legend ID ["x", "label"...] the names of its series, the x axis's first
//   screenshot WxH            the screenshot, also written to SCREENSHOT.png
// Usage: node check-page.js CHROMIUM PAGE.html SCREENSHOT.png
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const zlib = require("zlib");

const [chromium, page, shotPath] = process.argv.slice(2);
const PALETTE = [[0x1f, 0x77, 0xb4], [0xd6, 0x27, 0x28], [0x2c, 0xa0, 0x2c], [0xff, 0x7f, 0x0e]];
const WIDTH = 1200;

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "pgbench-report-chromium-"));
const browser = spawn(chromium, [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--user-data-dir=" + profile, "--remote-debugging-pipe", "--hide-scrollbars",
  "--window-size=" + WIDTH + ",900", "about:blank",
], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
let stderr = "";
browser.stdio[2].on("data", (d) => { stderr += d; });

let done = false, exited = false;
// Ends chromium, then removes its profile (once it has stopped writing there).
function finish(code, message) {
  done = true;
  if (message) process.stderr.write(message + "\n" + stderr.slice(-2000) + "\n");
  const cleanup = () => {
    try {
      fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    } catch (e) { /* a leftover temporary directory is not a failure */ }
    process.exit(code);
  };
  if (exited) return cleanup();
  browser.once("exit", cleanup);
  try { browser.kill("SIGKILL"); } catch (e) { cleanup(); }
}
setTimeout(() => finish(3, "timed out after 60 s"), 60000).unref();
browser.on("exit", (code) => {
  exited = true;
  if (!done) finish(4, "chromium exited early with status " + code);
});

let nextId = 0;
const pending = new Map();
const listeners = [];
let inbox = Buffer.alloc(0);
browser.stdio[4].on("data", (chunk) => {
  inbox = Buffer.concat([inbox, chunk]);
  let end;
  while ((end = inbox.indexOf(0)) >= 0) {
    const msg = JSON.parse(inbox.subarray(0, end).toString("utf8"));
    inbox = inbox.subarray(end + 1);
    if (msg.id !== undefined && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(msg.error.message)); else resolve(msg.result);
    } else if (msg.method) {
      listeners.forEach((l) => l(msg));
    }
  }
});
function send(method, params, sessionId) {
  const msg = { id: ++nextId, method, params: params || {} };
  if (sessionId) msg.sessionId = sessionId;
  browser.stdio[3].write(JSON.stringify(msg) + "\0");
  return new Promise((resolve, reject) => pending.set(msg.id, { resolve, reject }));
}
const out = [];
const say = (line) => out.push(line.replace(/\n/g, " "));

listeners.push((m) => {
  const p = m.params;
  if (m.method === "Network.requestWillBeSent") say("request " + p.request.url);
  if (m.method === "Runtime.exceptionThrown") {
    const d = p.exceptionDetails;
    say("exception " + ((d.exception && d.exception.description) || d.text));
  }
  if (m.method === "Runtime.consoleAPICalled" && (p.type === "error" || p.type === "warning" || p.type === "assert")) {
    say("console " + p.type + " " + p.args.map((a) => a.value || a.description).join(" "));
  }
  if (m.method === "Log.entryAdded" && (p.entry.level === "error" || p.entry.level === "warning")) {
    say("console " + p.entry.level + " " + p.entry.text + " " + (p.entry.url || ""));
  }
});

// A PNG as {width, height, channels, data}: 8-bit RGB or RGBA, all five row filters.
function decodePng(buf) {
  let pos = 8, width = 0, height = 0, channels = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString("ascii", pos + 4, pos + 8);
    const body = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8) throw new Error("bit depth " + body[8]);
      channels = { 2: 3, 6: 4 }[body[9]];
      if (!channels) throw new Error("colour type " + body[9]);
    } else if (type === "IDAT") idat.push(body);
    pos += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const data = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? data[y * stride + x - channels] : 0;
      const b = y > 0 ? data[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? data[(y - 1) * stride + x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      data[y * stride + x] = v & 255;
    }
  }
  return { width, height, channels, data };
}

function count(img, rect, test) {
  let n = 0;
  const x0 = Math.max(0, Math.round(rect.left)), x1 = Math.min(img.width, Math.round(rect.left + rect.width));
  const y0 = Math.max(0, Math.round(rect.top)), y1 = Math.min(img.height, Math.round(rect.top + rect.height));
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = (y * img.width + x) * img.channels;
      if (test(img.data[i], img.data[i + 1], img.data[i + 2])) n++;
    }
  }
  return n;
}

(async () => {
  const { targetInfos } = await send("Target.getTargets");
  const target = targetInfos.find((t) => t.type === "page");
  const { sessionId } = await send("Target.attachToTarget", { targetId: target.targetId, flatten: true });
  const s = (method, params) => send(method, params, sessionId);
  for (const domain of ["Runtime", "Log", "Network", "Page"]) await s(domain + ".enable");
  await s("Emulation.setDeviceMetricsOverride", { width: WIDTH, height: 900, deviceScaleFactor: 1, mobile: false });
  const loaded = new Promise((resolve) => listeners.push((m) => { if (m.method === "Page.loadEventFired") resolve(); }));
  await s("Page.navigate", { url: "file://" + path.resolve(page) });
  await loaded;
  await new Promise((r) => setTimeout(r, 500));
  const evaluate = async (expr) => (await s("Runtime.evaluate", { expression: expr, returnByValue: true })).result.value;
  const charts = JSON.parse((await evaluate("JSON.stringify(window.pgbenchChartRects ? window.pgbenchChartRects() : [])")) || "[]");
  const height = await evaluate("document.documentElement.scrollHeight");
  const shot = await s("Page.captureScreenshot", {
    format: "png", captureBeyondViewport: true, clip: { x: 0, y: 0, width: WIDTH, height, scale: 1 },
  });
  const png = Buffer.from(shot.data, "base64");
  fs.writeFileSync(shotPath, png);
  const img = decodePng(png);
  say("screenshot " + img.width + "x" + img.height);
  const saturated = (r, g, b) => Math.max(r, g, b) - Math.min(r, g, b) > 60;
  const darkText = (r, g, b) => r < 110 && g < 110 && b < 110;
  for (const c of charts) {
    const p = c.plot;
    const left = { left: p.left - 70, top: p.top, width: 70, height: p.height };
    const bottom = { left: p.left, top: p.top + p.height, width: p.width, height: 50 };
    const colours = PALETTE.map(([R, G, B]) => count(img, p, (r, g, b) =>
      Math.abs(r - R) < 40 && Math.abs(g - G) < 40 && Math.abs(b - B) < 40));
    say("chart " + c.id + " coloured=" + count(img, p, saturated) + " dark_left=" + count(img, left, darkText) +
      " dark_bottom=" + count(img, bottom, darkText) + " colours=" + colours.join(","));
    for (const m of c.marks || []) {
      const [R, G, B] = m.colour, t = m.tolerance;
      const near = count(img, m.rect, (r, g, b) => Math.abs(r - R) <= t && Math.abs(g - G) <= t && Math.abs(b - B) <= t);
      say("mark " + c.id + " " + m.kind + " pixels=" + near + " area=" + Math.round(m.rect.width) * Math.round(m.rect.height));
      // A series drawn across the mark's span high up (an interval's failures at
      // the outage that caused them).
      const top = { left: m.rect.left, top: m.rect.top, width: m.rect.width, height: m.rect.height / 2 };
      say("marktop " + c.id + " " + m.kind + " series=" + count(img, top, saturated));
    }
    for (const l of c.labels || []) say("label " + c.id + " " + JSON.stringify(Object.assign({ text: l.text }, l.rect)));
  }
  say("drawn " + (await evaluate("document.body.getAttribute('data-charts-drawn')")));
  const data = JSON.parse((await evaluate("JSON.stringify((window.pgbenchCharts || []).map(function (c) { return [c.id, c.plot.data]; }))")) || "[]");
  for (const [id, d] of data) say("data " + id + " " + JSON.stringify(d));
  const legends = JSON.parse((await evaluate("JSON.stringify((window.pgbenchCharts || []).map(function (c) { return [c.id, c.plot.series.map(function (s) { return s.label; })]; }))")) || "[]");
  for (const [id, l] of legends) say("legend " + id + " " + JSON.stringify(l));
  // Each table with an id, as its rows' cell texts (what a reader sees of it).
  const tables = JSON.parse((await evaluate("JSON.stringify(Array.from(document.querySelectorAll('table[id]')).map(function (t) { return [t.id, Array.from(t.rows).map(function (r) { return Array.from(r.cells).map(function (c) { return c.innerText; }); })]; }))")) || "[]");
  for (const [id, rows] of tables) say("table " + id + " " + JSON.stringify(rows));
  process.stdout.write(out.join("\n") + "\n");
  finish(0);
})().catch((e) => finish(2, "check-page: " + e.stack));
