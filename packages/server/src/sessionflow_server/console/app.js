// The sessionflow web console: plain JavaScript, no build step, no third-party code.
// Security rules this file keeps:
// - Everything a model, a tool or a user wrote is inserted as text (textContent or text
//   nodes, through `el`); nothing here ever parses markup from a string. Markdown is
//   rendered by `markdown()` below, which builds DOM nodes and sets only text.
// - Links a model wrote get only http, https or mailto addresses, rel="noopener noreferrer".
// - The token lives in sessionStorage and travels only in the Authorization header.
"use strict";

const API = "/api/v1";
const TOKEN_KEY = "sessionflow.token";
const USER_KEY = "sessionflow.user";
const LAST_EVENT_PREFIX = "sessionflow.last-event.";
const POLICIES = ["enqueue", "interrupt", "reject", "steer"];
const STATE_WORDS = { idle: "idle", working: "working", waiting_for_you: "waiting for you", failed: "failed", stopped: "stopped" };
const CUT = /\n\[\.\.\. cut: ([\d,]+) more characters/;

let current = null; // the open session view's state, or null
let poller = null; // re-reads a list view: the lists come from search attributes, which lag a little
let me = null; // GET /me, read once per login
const POLL_MS = 3000;

// -- DOM ------------------------------------------------------------------------------------

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node && key !== "list") node[key] = value;
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function show(...nodes) {
  document.getElementById("main").replaceChildren(...nodes);
}

// The page-wide line, for what belongs to no control (a failed page load).
function say(text) {
  document.getElementById("status").textContent = text || "";
}

const words = (value) => String(value || "").replaceAll("_", " ");
const turnLabel = (id) => String(id || "").replace(/^turn-(\d+)$/, "turn $1");

// -- time, numbers --------------------------------------------------------------------------

function when(iso) {
  const time = Date.parse(iso || "");
  if (Number.isNaN(time)) return "";
  const date = new Date(time);
  const today = new Date().toDateString() === date.toDateString();
  return today ? date.toLocaleTimeString() : date.toLocaleString();
}

function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms) || ms < 0) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(Math.floor(seconds % 60)).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

function between(start, end) {
  const a = Date.parse(start || "");
  const b = end ? Date.parse(end) : Date.now();
  return Number.isNaN(a) || Number.isNaN(b) ? "" : duration(b - a);
}

function ago(iso) {
  const span = between(iso, null);
  return span ? `${span} ago` : "";
}

function tokens(usage) {
  if (!usage) return "";
  const total = (usage.input_tokens || 0) + (usage.output_tokens || 0);
  return total ? `${total.toLocaleString()} tokens (${(usage.input_tokens || 0).toLocaleString()} in, ${(usage.output_tokens || 0).toLocaleString()} out)` : "";
}

const cost = (usd) => (typeof usd === "number" ? `$${usd < 0.01 ? usd.toFixed(4) : usd.toFixed(2)}` : "");

// -- markdown, rendered as DOM nodes --------------------------------------------------------

const SAFE_LINK = /^(https?:|mailto:)/i;

function inline(text) {
  const out = [];
  // code first (its content stays literal), then links, bold, emphasis
  const pattern = /`([^`\n]+)`|\[([^\]\n]+)\]\(([^)\s]+)\)|\*\*([^*\n]+)\*\*|__([^_\n]+)__|\*([^*\n]+)\*|\b_([^_\n]+)_\b|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) out.push(text.slice(last, match.index));
    const [whole, code, label, href, bold1, bold2, em1, em2, bare] = match;
    if (code !== undefined) out.push(el("code", {}, code));
    else if (label !== undefined) out.push(SAFE_LINK.test(href) ? el("a", { href, rel: "noopener noreferrer", target: "_blank" }, ...inline(label)) : whole);
    else if (bold1 !== undefined || bold2 !== undefined) out.push(el("strong", {}, ...inline(bold1 ?? bold2)));
    else if (em1 !== undefined || em2 !== undefined) out.push(el("em", {}, ...inline(em1 ?? em2)));
    else if (bare !== undefined) out.push(el("a", { href: bare, rel: "noopener noreferrer", target: "_blank" }, bare));
    last = match.index + whole.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function markdown(text) {
  const root = el("div", { className: "md" });
  const lines = String(text).split(/\r?\n/);
  let paragraph = [];
  let list = null;
  const flush = () => {
    if (paragraph.length) root.append(el("p", {}, ...paragraph.flatMap((line, i) => (i ? [el("br"), ...inline(line)] : inline(line)))));
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      flush();
      list = null;
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) body.push(lines[i]);
      root.append(el("pre", { className: "code" }, el("code", { dataset: fence[2] ? { lang: fence[2] } : {} }, body.join("\n"))));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      list = null;
      root.append(el(`h${Math.min(6, heading[1].length + 2)}`, {}, ...inline(heading[2])));
    } else if (item) {
      flush();
      const ordered = /\d/.test(item[1]);
      if (!list || list.ordered !== ordered) {
        list = { ordered, node: el(ordered ? "ol" : "ul") };
        root.append(list.node);
      }
      list.node.append(el("li", {}, ...inline(item[2])));
    } else if (!line.trim()) {
      flush();
      list = null;
    } else if (/^>\s?/.test(line)) {
      flush();
      list = null;
      root.append(el("blockquote", {}, ...inline(line.replace(/^>\s?/, ""))));
    } else {
      list = null;
      paragraph.push(line);
    }
  }
  flush();
  return root;
}

// -- API and the connection -----------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.error)) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.error;
  }
}

function authHeaders() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

// While the server is away, actions are greyed out and a probe retries; when it answers
// again, everything comes back by itself (the open view re-reads what it shows).
const connection = {
  online: true,
  probe: null,
  lost() {
    if (!this.online) return;
    this.online = false;
    document.body.classList.add("offline");
    const badge = document.getElementById("connection");
    badge.textContent = "server unreachable, retrying…";
    badge.dataset.state = "offline";
    greyOut(true);
    this.probe = setInterval(() => api("GET", "/me").catch(() => {}), 1500);
  },
  back() {
    if (this.online) return;
    this.online = true;
    clearInterval(this.probe);
    document.body.classList.remove("offline");
    const badge = document.getElementById("connection");
    badge.textContent = "connected";
    badge.dataset.state = "online";
    greyOut(false);
    if (current) current.refresh();
    refreshInboxCount();
  },
};

function greyOut(off, scope) {
  for (const node of (scope || document).querySelectorAll("main button, main select")) {
    if (off && !node.disabled) {
      node.disabled = true;
      node.dataset.offline = "1";
    } else if (!off && node.dataset.offline) {
      node.disabled = false;
      delete node.dataset.offline;
    }
  }
}

async function request(method, path, body) {
  const headers = authHeaders();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(API + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
  } catch (_) {
    connection.lost();
    throw new ApiError(0, { detail: "The server is not answering; the console retries by itself." });
  }
  connection.back();
  if (response.status === 401 && path !== "/login") {
    sessionStorage.removeItem(TOKEN_KEY);
    showLoginEnded();
    throw new ApiError(401, { detail: "Your login ended." });
  }
  return response;
}

async function api(method, path, body) {
  const response = await request(method, path, body);
  let data = null;
  try {
    data = await response.json();
  } catch (_) {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// The whole text behind a route that streams it (a message, a tool output).
async function wholeText(path) {
  const response = await request("GET", path);
  if (!response.ok) {
    let data = null;
    try {
      data = await response.json();
    } catch (_) {
      data = null;
    }
    throw new ApiError(response.status, data);
  }
  if ((response.headers.get("content-type") || "").includes("json")) {
    const data = await response.json();
    const message = data.message && typeof data.message === "object" ? data.message : data;
    return String(message.text ?? data.text ?? JSON.stringify(data, null, 2));
  }
  return response.text();
}

const sid = (id) => encodeURIComponent(id);

// Errors go beside the control that caused them, and every new action clears them.
function errorSlot(className) {
  return el("span", { className: `error ${className || ""}`.trim(), role: "alert" });
}

function clearErrors() {
  for (const node of document.querySelectorAll(".error")) node.textContent = "";
  say("");
}

async function act(button, slot, work) {
  clearErrors();
  if (button) button.disabled = true;
  try {
    await work();
  } catch (error) {
    if (slot && error.status !== 401) slot.textContent = error.message;
  } finally {
    if (button) {
      if (connection.online) button.disabled = false;
      else button.dataset.offline = "1";
    }
  }
}

// -- login ----------------------------------------------------------------------------------

async function loginFromFragment() {
  const hash = location.hash;
  if (!hash.startsWith("#code=")) return;
  const code = decodeURIComponent(hash.slice("#code=".length));
  // The code is single-use: take it out of the address bar and history right away.
  history.replaceState(null, "", location.pathname + "#/sessions");
  try {
    const answer = await api("POST", "/login", { code });
    sessionStorage.setItem(TOKEN_KEY, answer.token);
    sessionStorage.setItem(USER_KEY, answer.user);
    me = null;
  } catch (error) {
    say(`Login failed: ${error.message}`);
  }
}

function loginHelp() {
  return el(
    "p",
    {},
    "Open a new login URL: ",
    el("code", {}, "sessionflow serve"),
    " prints one when it starts (it ends in ",
    el("code", {}, "#code=…"),
    " and works once, for 10 minutes).",
  );
}

function showLoggedOut() {
  document.getElementById("who").textContent = "";
  show(el("section", { id: "logged-out", className: "notice" }, el("h1", {}, "Not logged in"), loginHelp()));
}

function showLoginEnded() {
  stopViews();
  document.getElementById("who").textContent = "";
  show(
    el(
      "section",
      { id: "logged-out", className: "notice" },
      el("h1", {}, "Your login ended"),
      el("p", {}, "The server no longer knows this tab's login (it may have restarted with new tokens)."),
      loginHelp(),
    ),
  );
}

// -- routing --------------------------------------------------------------------------------

function stopViews() {
  if (current) {
    current.close();
    current = null;
  }
  clearInterval(poller);
  poller = null;
}

async function route() {
  stopViews();
  say("");
  if (!sessionStorage.getItem(TOKEN_KEY)) return showLoggedOut();
  document.getElementById("who").textContent = sessionStorage.getItem(USER_KEY) || "";
  const hash = location.hash || "#/sessions";
  for (const link of document.querySelectorAll("header nav a")) link.classList.toggle("here", hash.startsWith(link.getAttribute("href")));
  try {
    if (!me) me = await api("GET", "/me");
    if (hash.startsWith("#/s/")) {
      current = new SessionView(decodeURIComponent(hash.slice(4)));
      await current.open();
    } else if (hash === "#/inbox") {
      await renderInbox();
    } else {
      await renderSessions();
    }
  } catch (error) {
    if (error.status !== 401) say(error.message);
  }
  refreshInboxCount();
}

async function refreshInboxCount() {
  if (!sessionStorage.getItem(TOKEN_KEY)) return;
  try {
    const { interrupts } = await api("GET", "/interrupts");
    const badge = document.getElementById("inbox-count");
    badge.textContent = String(interrupts.length);
    badge.hidden = interrupts.length === 0;
  } catch (_) {
    // the list needs search attributes; the badge simply stays hidden without them
  }
}

function poll(fill) {
  poller = setInterval(() => {
    if (document.visibilityState === "visible" && connection.online) fill().catch(() => {});
  }, POLL_MS);
}

// -- sessions list --------------------------------------------------------------------------

function policySelect(id, withDefault) {
  const options = withDefault ? [el("option", { value: "" }, "session's policy")] : [];
  return el("select", { id }, options, POLICIES.map((p) => el("option", { value: p }, p)));
}

// A list item's true state; older servers send only the workflow's status and counters.
function listState(s) {
  if (STATE_WORDS[s.state]) return s.state;
  if (s.stopped) return "stopped";
  if (s.pending_approvals || s.state === "waiting_for_approval") return "waiting_for_you";
  if (s.state === "running" || s.agent_status === "running_model" || s.agent_status === "running_tools") return "working";
  return "idle";
}

function stateBadge(state, detail) {
  return el("span", { className: "state", dataset: { state } }, detail || STATE_WORDS[state] || words(state));
}

async function renderSessions() {
  const message = el("textarea", { id: "new-message", placeholder: "First message (optional)" });
  const policy = policySelect("new-policy", false);
  const startError = errorSlot();
  const startButton = el("button", { type: "submit", id: "start" }, "Start session");
  const start = (event) => {
    event.preventDefault();
    return act(startButton, startError, async () => {
      const body = { double_texting: policy.value };
      if (message.value.trim()) body.message = message.value;
      const created = await api("POST", "/sessions", body);
      location.hash = `#/s/${sid(created.session_id)}`;
    });
  };
  const search = el("input", { type: "search", id: "search", placeholder: "Search title or ID" });
  const filter = el("select", { id: "state-filter" }, el("option", { value: "" }, "any state"), Object.entries(STATE_WORDS).map(([value, text]) => el("option", { value }, text)));
  const list = el("div", { id: "session-list" });
  show(
    el("h1", {}, "Sessions"),
    el("form", { className: "controls send", id: "new-session", onsubmit: start }, message, el("div", { className: "row" }, el("label", {}, "Double-texting ", policy), startButton, startError)),
    el("div", { className: "controls filters" }, search, filter),
    list,
  );
  let serverFilters = true;
  let generation = 0;
  const fill = async () => {
    const mine = ++generation;
    const q = search.value.trim();
    const state = filter.value;
    const query = new URLSearchParams();
    if (serverFilters && q) query.set("q", q);
    if (serverFilters && state) query.set("state", state);
    let sessions;
    try {
      ({ sessions } = await api("GET", `/sessions${query.size ? `?${query}` : ""}`));
    } catch (error) {
      if (error.status !== 422 || !query.size) throw error;
      serverFilters = false; // an older server: filter here
      ({ sessions } = await api("GET", "/sessions"));
    }
    if (mine !== generation) return; // a newer read (the search changed) draws the list
    // Filtered here too, so the list is right with a server that ignores a filter.
    const needle = q.toLowerCase();
    const shown = sessions.filter((s) => (!state || listState(s) === state) && (!needle || s.session_id.toLowerCase().includes(needle) || String(s.title || "").toLowerCase().includes(needle)));
    list.replaceChildren(shown.length ? sessionTree(shown) : el("p", { className: "muted", id: "no-sessions" }, q || state ? "No session matches." : "No sessions yet."));
  };
  let typing = null;
  search.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => fill().catch((error) => say(error.message)), 250);
  });
  filter.addEventListener("change", () => fill().catch((error) => say(error.message)));
  await fill();
  poll(fill);
}

// Forks are drawn under the session they were forked from, when it is in the list.
function sessionTree(sessions) {
  const ids = new Set(sessions.map((s) => s.session_id));
  const children = new Map();
  const roots = [];
  for (const s of sessions) {
    const parent = s.forked_from && s.forked_from.session_id;
    if (parent && ids.has(parent) && parent !== s.session_id) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(s);
    } else roots.push(s);
  }
  const item = (s, seen) => {
    const state = listState(s);
    const kids = seen.has(s.session_id) ? [] : children.get(s.session_id) || [];
    seen.add(s.session_id);
    const usage = s.usage ? tokens(s.usage) : "";
    return el(
      "li",
      { className: "session", dataset: { session: s.session_id, state } },
      el(
        "div",
        { className: "session-line" },
        el("a", { href: `#/s/${sid(s.session_id)}`, className: "title" }, s.title || s.session_id),
        stateBadge(state),
        s.pending_approvals ? el("span", { className: "badge pending" }, `${s.pending_approvals} pending`) : null,
        s.queued_message_count ? el("span", { className: "badge queued" }, `${s.queued_message_count} queued`) : null,
      ),
      el(
        "div",
        { className: "session-meta muted" },
        s.title ? el("span", { className: "id" }, s.session_id) : null,
        s.forked_from ? el("span", {}, `fork of ${s.forked_from.session_id} at turn ${s.forked_from.turn}`) : null,
        usage ? el("span", { className: "tokens" }, usage) : null,
        cost(s.cost_usd) ? el("span", { className: "cost" }, cost(s.cost_usd)) : null,
        el("span", { className: "when", title: s.last_activity_at || s.last_activity || s.start_time || "" }, ago(s.last_activity_at || s.last_activity || s.start_time)),
      ),
      kids.length ? el("ul", { className: "forks" }, kids.map((kid) => item(kid, seen))) : null,
    );
  };
  const seen = new Set();
  return el("ul", { id: "sessions" }, roots.map((s) => item(s, seen)));
}

// -- approvals inbox ------------------------------------------------------------------------

async function renderInbox() {
  const list = el("div", { id: "inbox" });
  show(el("h1", {}, "Approvals"), list);
  const fill = async () => {
    const { interrupts } = await api("GET", "/interrupts");
    // Keep boxes that are still pending (a reason being typed survives); add new ones.
    const wanted = new Set(interrupts.map((item) => item.interrupt.interrupt_id));
    for (const box of list.querySelectorAll("[data-inbox]")) if (!wanted.has(box.dataset.inbox)) box.remove();
    const have = new Set([...list.querySelectorAll("[data-inbox]")].map((box) => box.dataset.inbox));
    for (const item of interrupts) {
      if (have.has(item.interrupt.interrupt_id)) continue;
      const waited = typeof item.waited_seconds === "number" ? Date.now() - item.waited_seconds * 1000 : Date.parse(item.interrupt.raised_at || "");
      list.append(
        el(
          "article",
          { className: "inbox-item", dataset: { inbox: item.interrupt.interrupt_id } },
          el(
            "div",
            { className: "inbox-head" },
            el("a", { href: `#/s/${sid(item.session_id)}`, className: "title" }, item.session_title || item.session_id),
            item.session_title ? el("span", { className: "muted id" }, item.session_id) : null,
            el("span", { className: "muted turn-label" }, turnLabel(item.interrupt.turn_id)),
            Number.isNaN(waited) ? null : el("span", { className: "muted waited", dataset: { since: String(waited) } }, `waiting ${duration(Date.now() - waited)}`),
          ),
          interruptBox(item.session_id, item.interrupt, () => fill().then(refreshInboxCount)),
        ),
      );
    }
    const empty = list.querySelector("#inbox-empty");
    if (interrupts.length && empty) empty.remove();
    if (!interrupts.length && !empty) list.append(el("p", { className: "muted", id: "inbox-empty" }, "Nothing waits for you."));
    if (!connection.online) greyOut(true, list);
  };
  await fill();
  poll(async () => {
    await fill();
    await refreshInboxCount();
  });
}

function remaining(deadline) {
  const left = Math.round((Date.parse(deadline) - Date.now()) / 1000);
  if (Number.isNaN(left)) return "";
  if (left <= 0) return "deadline passed";
  const minutes = Math.floor(left / 60);
  return `${minutes ? `${minutes}m ` : ""}${left % 60}s left`;
}

function parsedArguments(text) {
  try {
    return JSON.parse(text);
  } catch (_) {
    return undefined;
  }
}

// A shell command as `$ cmd`, other arguments as indented JSON.
function formatArguments(toolName, text) {
  const value = parsedArguments(text);
  if (value === undefined) return { kind: "json", text: String(text ?? "") };
  const command = value && typeof value === "object" && !Array.isArray(value) ? value.command ?? value.cmd : undefined;
  if (typeof command === "string" && (/shell|bash|exec|command|terminal|run/i.test(toolName || "") || Object.keys(value).length === 1)) {
    return { kind: "command", text: command };
  }
  const multiline = value && typeof value === "object" && !Array.isArray(value) && Object.values(value).some((v) => typeof v === "string" && v.includes("\n"));
  if (!multiline) return { kind: "json", text: JSON.stringify(value, null, 2) };
  // A text argument with line breaks (a file's content) reads as the text itself, not as
  // one JSON line of \n escapes.
  const lines = Object.entries(value).map(([key, v]) =>
    typeof v === "string" && v.includes("\n") ? `${key}: |\n${v.replace(/\n$/, "").split("\n").map((line) => `  ${line}`).join("\n")}` : `${key}: ${JSON.stringify(v, null, 2)}`,
  );
  return { kind: "json", text: lines.join("\n") };
}

function diffNode(text) {
  return el(
    "pre",
    { className: "arguments diff" },
    String(text)
      .replace(/\n$/, "")
      .split("\n")
      .map((line) => {
        let kind = "same";
        if (line.startsWith("+++") || line.startsWith("---")) kind = "file";
        else if (line.startsWith("@@")) kind = "hunk";
        else if (line.startsWith("+")) kind = "add";
        else if (line.startsWith("-")) kind = "del";
        return el("span", { className: `line ${kind}` }, `${line}\n`);
      }),
  );
}

function previewNode(toolName, preview, argumentsText) {
  const shown = preview && preview.text !== undefined ? preview : formatArguments(toolName, argumentsText);
  if (shown.kind === "diff") return diffNode(shown.text);
  if (shown.kind === "command") return el("pre", { className: "arguments command" }, `$ ${shown.text}`);
  return el("pre", { className: "arguments json" }, shown.text);
}

function whyNeeded(interrupt) {
  if (interrupt.reason) return interrupt.reason;
  if (interrupt.source === "framework") return "the framework's own approval rule";
  return interrupt.effect ? `the session's approval policy (effect: ${words(interrupt.effect)})` : "";
}

function interruptBox(sessionId, interrupt, after) {
  const path = `/sessions/${sid(sessionId)}/interrupts/${encodeURIComponent(interrupt.interrupt_id)}`;
  const slot = errorSlot();
  const box = el("div", { className: "interrupt", dataset: { interrupt: interrupt.interrupt_id, kind: interrupt.kind || "approval" } });
  const outcome = el("span", { className: "outcome", role: "status" });
  const tried = new Set(); // answers already sent: a 409 for one of them means it took
  const resolve = (body, label, doing) =>
    act(null, slot, async () => {
      const buttons = [...box.querySelectorAll("button")];
      for (const button of buttons) button.disabled = true;
      outcome.textContent = doing;
      try {
        const again = tried.has(label);
        tried.add(label);
        try {
          await api("POST", path, body);
        } catch (error) {
          // A double click, or a retry after a lost answer: the answer is already in.
          if (!(error.status === 409 && error.code === "already_resolved" && again)) throw error;
        }
      } catch (error) {
        outcome.textContent = "";
        for (const button of buttons) if (connection.online) button.disabled = false;
        throw error;
      }
      box.classList.add("answered");
      box.dataset.answered = label;
      outcome.textContent = `${label}; the session goes on…`;
      await after();
    });
  const countdown = interrupt.deadline ? el("span", { className: "countdown", dataset: { deadline: interrupt.deadline } }, remaining(interrupt.deadline)) : null;
  if (interrupt.kind === "question") {
    const answer = el("input", { type: "text", className: "answer", placeholder: "Your answer" });
    const send = el("button", { className: "answer-button", onclick: () => resolve({ value: answer.value }, "answered", "sending…") }, "Answer");
    box.append(el("strong", {}, "Question: "), el("span", { className: "question" }, interrupt.question || interrupt.tool_name), " ", countdown || "", el("div", { className: "controls" }, answer, send, outcome, slot));
    return box;
  }
  const reason = el("input", { type: "text", className: "reason", placeholder: "Reason (sent to the model)" });
  const preview = interrupt.preview || null;
  const why = whyNeeded(interrupt);
  box.append(
    el(
      "div",
      { className: "interrupt-head" },
      el("strong", {}, "Approve "),
      el("code", {}, interrupt.tool_name),
      "? ",
      interrupt.effect ? el("span", { className: "effect" }, words(interrupt.effect)) : null,
      preview && preview.summary ? el("span", { className: "preview-summary" }, preview.summary) : null,
      countdown,
    ),
    why ? el("p", { className: "why muted" }, "Needs approval because: ", el("span", { className: "reason-text" }, ...inline(why))) : null,
    previewNode(interrupt.tool_name, preview, interrupt.arguments),
    el(
      "div",
      { className: "controls" },
      el("button", { className: "approve", title: "Approve (a)", onclick: () => resolve({ approved: true }, "approved", "approving…") }, "Approve"),
      reason,
      el("button", { className: "reject", title: "Reject (r)", onclick: () => resolve(reason.value.trim() ? { approved: false, reason: reason.value } : { approved: false }, "rejected", "rejecting…") }, "Reject"),
      outcome,
      slot,
    ),
  );
  return box;
}

setInterval(() => {
  for (const node of document.querySelectorAll(".countdown")) node.textContent = remaining(node.dataset.deadline);
  for (const node of document.querySelectorAll(".waited")) node.textContent = `waiting ${duration(Date.now() - Number(node.dataset.since))}`;
  for (const node of document.querySelectorAll(".turn[data-outcome='running'] .elapsed")) node.textContent = `running for ${between(node.dataset.since, null)}`;
}, 1000);

// -- one session ----------------------------------------------------------------------------

function snapshotState(snapshot, turns) {
  const state = snapshot.state || {};
  const last = turns && turns.length ? turns[turns.length - 1] : null;
  // A cancel is the person's own doing: the session is idle after it, not failed.
  const outcome = state.last_turn_outcome || (last && last.outcome !== "running" ? last.outcome : null);
  const failed = outcome ? outcome === "failed" || outcome === "stopped" : Boolean(state.last_turn_error) && state.last_turn_error !== "turn cancelled";
  if (snapshot.stopped) return ["stopped", "stopped"];
  if ((snapshot.pending_interrupts || []).length) return ["waiting_for_you", "waiting for you"];
  if (state.status === "running_tools") return ["working", "working: running tools"];
  if (state.status === "running_model" || state.turn_id) return ["working", "working: the model is thinking"];
  if (failed) return ["failed", "failed"];
  return ["idle", "idle"];
}

const OUTCOME_WORDS = { running: "running", completed: "completed", failed: "failed", cancelled: "cancelled", stopped: "stopped" };

class SessionView {
  constructor(id) {
    this.id = id;
    this.lastSequence = 0;
    this.messages = new Map(); // sequence -> stored message
    this.turns = null; // the turn records; null while the server has none (an older server)
    this.turnsRoute = true;
    this.recorded = new Set(); // steps drawn from their record
    this.whole = new Map(); // "m<sequence>" or "o<call id>" -> whole text, opened by "show all"
    this.unfolded = new Set(); // tool calls the user unfolded
    this.live = new Map(); // "turn|step" -> {attempt, text, node, durable}
    this.ended = new Set(); // turns whose end event arrived
    this.abort = new AbortController();
    this.refreshing = null;
    this.again = false;
    this.closed = false;
    this.drawn = "";
  }

  close() {
    this.closed = true;
    this.abort.abort();
  }

  async open() {
    this.title = el("h1", { id: "session-title" }, this.id);
    this.stateNode = el("span", { id: "session-state" });
    this.meta = el("p", { className: "muted", id: "session-meta" });
    this.queued = el("p", { className: "queued", id: "queued", hidden: true });
    this.transcript = el("div", { id: "transcript" });
    this.liveArea = el("div", { id: "live" });
    this.tools = el("div", { id: "tools" });
    this.pending = el("div", { id: "pending" });
    const text = el("textarea", { id: "message", placeholder: "Message (Ctrl+Enter sends)" });
    const policy = policySelect("policy", true);
    const sendError = errorSlot();
    const sendButton = el("button", { type: "submit", id: "send-button" }, "Send");
    const send = (event) => {
      event.preventDefault();
      if (!text.value.trim()) return;
      return act(sendButton, sendError, async () => {
        const body = { message_id: crypto.randomUUID(), text: text.value };
        if (policy.value) body.double_texting = policy.value;
        const busy = this.busy;
        try {
          await api("POST", `/sessions/${sid(this.id)}/messages`, body);
        } catch (error) {
          if (error.code === "turn_running") throw new ApiError(409, { detail: "Not sent: a turn is running, and this message was set to be rejected while one runs (choose enqueue or interrupt)." });
          throw error;
        }
        text.value = "";
        const chosen = policy.value || this.policy;
        if (busy && chosen === "enqueue") this.showQueued(Math.max(1, this.queuedCount + 1), this.steeredCount);
        // A steer joins the running turn at its next model step (or starts the next turn).
        if (busy && chosen === "steer") this.showQueued(this.queuedCount, this.steeredCount + 1);
        this.refresh();
      });
    };
    const cancelError = errorSlot();
    const cancelButton = el("button", { id: "cancel", onclick: () => act(cancelButton, cancelError, () => this.cancel(cancelError)) }, "Cancel turn");
    const forkTurn = el("input", { type: "number", id: "fork-turn", min: 1, value: 1 });
    const forkError = errorSlot();
    const forkButton = el("button", { id: "fork", onclick: () => act(forkButton, forkError, () => this.fork(Number(forkTurn.value))) }, "Fork");
    const stopError = errorSlot();
    const confirm = el(
      "span",
      { id: "stop-confirm", className: "confirm", hidden: true },
      "Stop this session for good? ",
      el("button", { id: "stop-yes", className: "danger", onclick: (event) => act(event.currentTarget, stopError, () => this.stop(confirm)) }, "Stop it"),
      el("button", { id: "stop-no", onclick: () => (confirm.hidden = true) }, "Keep it"),
    );
    const stopButton = el("button", { id: "stop", className: "danger-outline", onclick: () => ((confirm.hidden = false), clearErrors()) }, "Stop session…");
    const temporal = me && me.temporal_ui_url ? el("a", { id: "temporal-link", href: `${me.temporal_ui_url.replace(/\/$/, "")}/namespaces/${encodeURIComponent(me.namespace || "default")}/workflows/${sid(this.id)}`, target: "_blank", rel: "noopener noreferrer" }, "Open in Temporal UI") : null;
    show(
      el("div", { className: "session-head" }, this.title, this.stateNode),
      this.meta,
      this.queued,
      el(
        "div",
        { className: "controls" },
        cancelButton,
        cancelError,
        el("label", {}, "Fork at turn ", forkTurn),
        forkButton,
        forkError,
        stopButton,
        confirm,
        stopError,
        temporal,
        el("button", { id: "help-button", className: "link", onclick: toggleHelp }, "Shortcuts (?)"),
      ),
      this.transcript,
      this.tools,
      this.liveArea,
      this.pending,
      el("form", { className: "controls send", id: "send", onsubmit: send }, text, el("div", { className: "row" }, el("label", {}, "If a turn runs: ", policy), sendButton, sendError)),
    );
    await this.refresh();
    this.stream();
  }

  showQueued(count, steered = 0) {
    const parts = [];
    if (count) parts.push(`${count} message${count === 1 ? "" : "s"} queued: ${count === 1 ? "it goes" : "they go"} to the model when the running turn ends`);
    if (steered) parts.push(`${steered} message${steered === 1 ? "" : "s"} to join the running turn at its next model step`);
    this.queued.hidden = !parts.length;
    this.queued.textContent = parts.join(" · ");
  }

  async cancel(slot) {
    const answer = await api("POST", `/sessions/${sid(this.id)}/cancel`);
    if (!answer.cancelled) slot.textContent = "No turn was running.";
    this.refresh();
  }

  async stop(confirm) {
    await api("POST", `/sessions/${sid(this.id)}/stop`);
    confirm.hidden = true;
    this.refresh();
  }

  async fork(turn) {
    const answer = await api("POST", `/sessions/${sid(this.id)}/fork`, { turn });
    location.hash = `#/s/${sid(answer.session_id)}`;
  }

  // Stored messages, turn records and the snapshot are the truth; refreshes never overlap.
  refresh() {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        try {
          await this.load();
        } catch (error) {
          if (error.status && error.status !== 401) say(error.message);
        }
      } while (this.again && !this.closed);
      this.refreshing = null;
    })();
    return this.refreshing;
  }

  async load() {
    for (;;) {
      const page = await api("GET", `/sessions/${sid(this.id)}/messages?after=${this.lastSequence}&limit=200`);
      for (const stored of page.messages) {
        this.messages.set(stored.sequence, stored);
        this.lastSequence = Math.max(this.lastSequence, stored.sequence);
      }
      if (page.next_after === null || page.next_after === undefined || page.messages.length === 0) break;
    }
    if (this.turnsRoute) {
      try {
        this.turns = (await api("GET", `/sessions/${sid(this.id)}/turns`)).turns;
      } catch (error) {
        if (error.status !== 404 && error.status !== 405) throw error;
        // A server without turn records: stored messages and the snapshot's calls.
        this.turnsRoute = false;
        this.turns = null;
      }
    }
    const snapshot = await api("GET", `/sessions/${sid(this.id)}`);
    if (this.closed) return;
    this.snapshot = snapshot;
    this.draw(snapshot);
  }

  draw(snapshot) {
    const state = snapshot.state || {};
    const [kind, text] = snapshotState(snapshot, this.turns);
    this.busy = kind === "working" || kind === "waiting_for_you";
    this.policy = snapshot.double_texting;
    this.stateNode.replaceChildren(stateBadge(kind, text));
    this.stateNode.dataset.state = kind;
    const parts = [`${state.turn_count || 0} turn${state.turn_count === 1 ? "" : "s"}`, `double-texting: ${snapshot.double_texting}`];
    const used = tokens(snapshot.usage);
    if (used) parts.push(used);
    // The kept turns' cost by the budget's prices (0 when the model has none).
    const spent = (this.turns || []).reduce((sum, turn) => sum + (turn.cost || 0), 0);
    if (spent) parts.push(cost(spent));
    if (snapshot.forked_from) parts.push(`forked from ${snapshot.forked_from.session_id} at turn ${snapshot.forked_from.turn}`);
    if (state.last_turn_error) parts.push(`last error: ${state.last_turn_error}`);
    this.meta.textContent = parts.join(" · ");
    this.meta.dataset.status = kind;
    this.queuedCount = snapshot.queued_message_count || 0;
    this.steeredCount = snapshot.steered_message_count || 0;
    this.showQueued(this.queuedCount, this.steeredCount);
    const first = [...this.messages.values()].find((m) => m.message && m.message.role === "user" && !this.noteSequences().has(m.sequence));
    if (first && first.message.text) {
      this.title.textContent = firstLine(first.message.text);
      this.title.title = this.id;
    }

    const signature = JSON.stringify([this.lastSequence, this.turns, [...this.whole.keys()], this.turns ? null : snapshot.tool_calls]);
    if (signature !== this.drawn) {
      this.drawn = signature;
      this.drawTranscript(snapshot);
    }
    // Boxes still pending stay as they are, so a reason or an answer being typed survives a refresh.
    const wanted = new Set(snapshot.pending_interrupts.map((i) => i.interrupt_id));
    for (const box of this.pending.querySelectorAll("[data-interrupt]")) if (!wanted.has(box.dataset.interrupt)) box.remove();
    const have = new Set([...this.pending.querySelectorAll("[data-interrupt]")].map((box) => box.dataset.interrupt));
    for (const i of snapshot.pending_interrupts) {
      if (!have.has(i.interrupt_id)) this.pending.append(interruptBox(this.id, i, () => this.refresh()));
    }
    // Live text gives way to what is recorded: a step's durable text, or the ended turn.
    for (const [key, entry] of this.live) {
      const [turn, step] = key.split("|");
      if (this.recorded.has(step) || this.ended.has(turn) || (!state.turn_id && state.status === "waiting_for_user_message" && !this.turns)) {
        entry.node.remove();
        this.live.delete(key);
      }
    }
    if (!connection.online) greyOut(true);
  }

  noteSequences() {
    return new Set((this.turns || []).map((t) => t.note_sequence).filter((n) => n !== null && n !== undefined));
  }

  drawTranscript(snapshot) {
    const notes = this.noteSequences();
    const records = new Map((this.turns || []).map((t) => [t.turn_id, t]));
    this.recorded = new Set((this.turns || []).flatMap((t) => (t.steps || []).map((s) => s.step)));
    const groups = new Map();
    for (const stored of [...this.messages.values()].sort((a, b) => a.sequence - b.sequence)) {
      const key = stored.turn_id || "";
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(stored);
    }
    for (const turn of this.turns || []) if (!groups.has(turn.turn_id)) groups.set(turn.turn_id, []);
    const number = (id) => {
      const match = /^turn-(\d+)$/.exec(id);
      return match ? Number(match[1]) : Number.MAX_SAFE_INTEGER;
    };
    const order = [...groups.keys()].sort((a, b) => number(a) - number(b));
    this.transcript.replaceChildren(...order.map((id) => this.turnNode(id, groups.get(id), records.get(id), notes)));
    // Without turn records, the running turn's calls come from the snapshot.
    this.tools.replaceChildren(...(this.turns ? [] : snapshot.tool_calls.map((call) => this.toolNode(call))));
  }

  turnNode(turnId, messages, record, notes) {
    const section = el("section", { className: "turn", dataset: { turn: turnId, outcome: record ? record.outcome : "" } });
    if (record) {
      const head = el(
        "div",
        { className: "turn-head muted" },
        el("span", {}, `Turn ${record.number}`),
        el("span", { className: "outcome", dataset: { outcome: record.outcome } }, OUTCOME_WORDS[record.outcome] || words(record.outcome)),
        el("span", { title: record.started_at }, when(record.started_at)),
        record.outcome === "running" ? el("span", { className: "elapsed", dataset: { since: record.started_at } }, `running for ${between(record.started_at, null)}`) : el("span", { className: "duration" }, between(record.started_at, record.ended_at)),
        tokens(record.usage) ? el("span", { className: "tokens" }, tokens(record.usage)) : null,
        record.cost ? el("span", { className: "cost" }, cost(record.cost)) : null,
      );
      section.append(head);
    }
    const recordDrawsSteps = record && ((record.steps || []).length || (record.tool_calls || []).length);
    const rest = [];
    for (const stored of messages) {
      const role = (stored.message || {}).role;
      if (notes.has(stored.sequence)) rest.push(this.noteNode(stored));
      else if (recordDrawsSteps && (role === "assistant" || role === "tool")) continue;
      else if (recordDrawsSteps && role !== "user") rest.push(this.messageNode(stored));
      else section.append(this.messageNode(stored));
    }
    if (recordDrawsSteps) {
      const calls = new Map((record.tool_calls || []).map((c) => [c.tool_call_id, c]));
      const drawn = new Set();
      const assistants = messages.filter((m) => (m.message || {}).role === "assistant");
      for (const step of record.steps || []) {
        if (step.text) section.append(this.stepNode(step, record, assistants));
        for (const id of step.tool_call_ids || []) {
          if (calls.has(id)) {
            section.append(this.toolNode(calls.get(id)));
            drawn.add(id);
          }
        }
      }
      for (const call of record.tool_calls || []) if (!drawn.has(call.tool_call_id)) section.append(this.toolNode(call));
    }
    section.append(...rest);
    if (record && record.error && record.outcome !== "completed" && record.outcome !== "running") {
      const outcome = OUTCOME_WORDS[record.outcome] || words(record.outcome);
      const said = record.error === `turn ${outcome}` ? `Turn ${outcome}.` : `Turn ${outcome}: ${record.error}`;
      section.append(el("div", { className: "msg system turn-error" }, said));
    }
    return section;
  }

  stepNode(step, record, assistants) {
    const node = el("div", { className: "msg assistant step", dataset: { step: step.step, turn: record.turn_id } });
    const key = `s${step.step}`;
    let text = this.whole.get(key) ?? step.text;
    // Cut by the record (text_cut) or already a stored message's preview (its cut marker):
    // the whole text is the stored assistant message this text begins.
    const marker = this.whole.has(key) ? null : CUT.exec(text);
    if (marker) text = text.slice(0, marker.index);
    node.append(markdown(text));
    if (!this.whole.has(key) && (step.text_cut || marker)) {
      const probe = text.slice(0, 40);
      const stored = assistants.find((m) => String(m.message.text || "").startsWith(probe));
      const what = marker ? `${marker[1]} more characters` : `${step.text_cut.toLocaleString()} more characters`;
      node.append(this.showAll(what, key, stored ? `/sessions/${sid(this.id)}/messages/${stored.sequence}` : null));
    }
    if (step.ended_at) node.append(el("div", { className: "stamp muted" }, when(step.ended_at)));
    return node;
  }

  showAll(what, key, path) {
    const slot = errorSlot();
    if (!path) return el("div", { className: "cut muted" }, `${what} are not shown.`);
    const button = el(
      "button",
      {
        className: "show-all link",
        onclick: () =>
          act(button, slot, async () => {
            this.whole.set(key, await wholeText(path));
            this.drawn = "";
            this.draw(this.snapshot);
          }),
      },
      `Show all (${what})`,
    );
    return el("div", { className: "cut" }, button, slot);
  }

  noteNode(stored) {
    const text = (stored.message || {}).text || "";
    return el("div", { className: "msg note system-note", dataset: { sequence: stored.sequence } }, el("span", { className: "label" }, "Session note for the next turn: "), el("span", { className: "text" }, text));
  }

  messageNode(stored) {
    const message = stored.message || {};
    const role = message.role || "system";
    const key = `m${stored.sequence}`;
    let text = this.whole.get(key) ?? (message.text === null || message.text === undefined ? "" : String(message.text));
    const cut = !this.whole.has(key) && (CUT.exec(text) || message.body);
    let more = null;
    if (cut) {
      const match = CUT.exec(text);
      if (match) text = text.slice(0, match.index);
      more = this.showAll(match ? `${match[1]} more characters` : "the stored message", key, `/sessions/${sid(this.id)}/messages/${stored.sequence}`);
    }
    if (role === "tool") {
      return el("details", { className: "tool stored", dataset: { sequence: stored.sequence } }, el("summary", {}, "tool result"), el("pre", { className: "tool-output" }, text), more);
    }
    const body = role === "assistant" ? markdown(text) : el("span", { className: "text" }, text);
    const node = el("div", { className: `msg ${role}`, dataset: { sequence: stored.sequence, turn: stored.turn_id } }, body, more);
    const match = /^turn-(\d+)$/.exec(stored.turn_id || "");
    if (role === "user" && match) node.dataset.turnNumber = match[1];
    return node;
  }

  toolNode(call) {
    const effect = call.effect || (call.policy && call.policy.effect) || "";
    const key = `o${call.tool_call_id}`;
    let output = call.output !== null && call.output !== undefined ? String(call.output) : call.error || call.rejection_message || "";
    if (this.whole.has(key)) output = this.whole.get(key);
    // Cut by the record (output_cut) or a stored body's preview (its cut marker).
    const marker = this.whole.has(key) ? null : CUT.exec(output);
    if (marker) output = output.slice(0, marker.index);
    const outputCut = this.whole.has(key) ? "" : marker ? `${marker[1]} more characters` : call.output_cut ? `${call.output_cut.toLocaleString()} more characters` : "";
    const outputPath = this.turns && (call.has_stored_output || call.output_cut || marker) ? `/sessions/${sid(this.id)}/turns/${encodeURIComponent(this.turnOf(call))}/tool-calls/${encodeURIComponent(call.tool_call_id)}/output` : null;
    const args = formatArguments(call.tool_name, call.arguments);
    const approval = call.approval;
    const took = call.started_at ? between(call.started_at, call.finished_at) : "";
    const node = el(
      "details",
      { className: "tool", open: this.unfolded.has(call.tool_call_id), dataset: { tool: call.tool_name, status: call.status, call: call.tool_call_id } },
      el(
        "summary",
        {},
        el("code", {}, call.tool_name),
        effect ? el("span", { className: "effect" }, words(effect)) : null,
        el("span", { className: "tool-status", dataset: { status: call.status } }, words(call.status)),
        took ? el("span", { className: "duration muted" }, took) : null,
        approval ? el("span", { className: "approval-line muted" }, approvalWords(approval)) : null,
      ),
      call.approval_reason ? el("p", { className: "why muted" }, "Needed approval because: ", ...inline(call.approval_reason)) : null,
      el("div", { className: "label muted" }, "arguments"),
      el("pre", { className: `tool-arguments ${args.kind}` }, args.kind === "command" ? `$ ${args.text}` : args.text),
      output ? el("div", { className: "label muted" }, call.status === "succeeded" ? "output" : "result") : null,
      output ? el("pre", { className: "tool-output" }, output) : null,
      outputCut ? this.showAll(outputCut, key, outputPath) : null,
    );
    node.addEventListener("toggle", () => (node.open ? this.unfolded.add(call.tool_call_id) : this.unfolded.delete(call.tool_call_id)));
    return node;
  }

  turnOf(call) {
    const turn = (this.turns || []).find((t) => (t.tool_calls || []).some((c) => c.tool_call_id === call.tool_call_id));
    return turn ? turn.turn_id : "";
  }

  // A step's attempts share a key; a higher attempt's text replaces a lower one's.
  onDelta(event) {
    const key = `${event.turn_id}|${event.step_execution_id}`;
    if (this.recorded && this.recorded.has(event.step_execution_id)) return; // drawn from its record
    let entry = this.live.get(key);
    if (entry && (entry.durable || event.attempt < entry.attempt)) return;
    if (!entry || event.attempt > entry.attempt) {
      const node = entry ? entry.node : el("div", { className: "msg live", dataset: { turn: event.turn_id, step: event.step_execution_id } });
      if (!entry) this.liveArea.append(node);
      entry = { attempt: event.attempt, text: "", node, durable: false };
      this.live.set(key, entry);
    }
    if (event.type === "text_delta") {
      entry.text += String((event.data && event.data.text) || "");
      entry.node.replaceChildren(markdown(entry.text));
    }
  }

  // The step's durable text replaces what streamed live, at once (the record follows).
  onStepCompleted(event) {
    const step = String((event.data && event.data.step) || event.step_execution_id);
    const key = `${event.turn_id}|${step}`;
    let entry = this.live.get(key);
    const text = String((event.data && event.data.text) || "");
    if (!entry) {
      if (!text || (this.recorded && this.recorded.has(step))) return;
      entry = { attempt: event.attempt, text, node: el("div", { className: "msg live", dataset: { turn: event.turn_id, step } }), durable: true };
      this.liveArea.append(entry.node);
      this.live.set(key, entry);
    }
    entry.durable = true;
    entry.text = text;
    entry.node.classList.add("durable");
    entry.node.replaceChildren(markdown(text));
    if (!text) {
      entry.node.remove();
      this.live.delete(key);
    }
  }

  onEvent(event) {
    // A reload resumes the stream after the last durable event this tab saw.
    if (event.offset !== null && event.offset !== undefined) {
      sessionStorage.setItem(LAST_EVENT_PREFIX + this.id, String(event.offset));
    }
    if (event.type === "text_delta" || event.type === "attempt_restarted") return this.onDelta(event);
    if (event.type === "reasoning_delta" || event.type === "custom_event") return;
    if (event.type === "model_step_completed") this.onStepCompleted(event);
    if (event.type === "turn_completed" || event.type === "turn_failed") this.ended.add(event.turn_id);
    this.refresh();
    refreshInboxCount();
  }

  // EventSource cannot send an Authorization header, so the stream is read with fetch.
  async stream() {
    while (!this.closed) {
      const headers = authHeaders();
      const last = sessionStorage.getItem(LAST_EVENT_PREFIX + this.id);
      if (last) headers["Last-Event-ID"] = last;
      try {
        let response;
        try {
          response = await fetch(`${API}/sessions/${sid(this.id)}/events`, { headers, signal: this.abort.signal, cache: "no-store" });
        } catch (error) {
          if (!this.closed) connection.lost();
          throw error;
        }
        connection.back();
        if (response.status === 401) {
          sessionStorage.removeItem(TOKEN_KEY);
          return showLoginEnded();
        }
        if (!response.ok) throw new ApiError(response.status, null);
        // A reconnect may have missed events: read the state again.
        this.refresh();
        if (await this.read(response.body)) return; // the session ended its stream
      } catch (error) {
        if (this.closed) return;
        if (error.status === 404) return say(error.message);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  async read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let fields = {};
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += value;
      let newline;
      while ((newline = buffer.search(/\r\n|\n|\r/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        if (line === "") {
          if (fields.event === "end") return true;
          if (fields.data !== undefined) {
            try {
              this.onEvent(JSON.parse(fields.data));
            } catch (error) {
              say(`Bad event: ${error.message}`);
            }
          }
          fields = {};
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const name = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? "" : line.slice(colon + 1);
          if (value.startsWith(" ")) value = value.slice(1);
          fields[name] = name === "data" && fields.data !== undefined ? `${fields.data}\n${value}` : value;
        }
      }
    }
  }
}

function firstLine(text) {
  const line = String(text).trim().split("\n")[0];
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function approvalWords(approval) {
  if (approval.expired) return `expired ${when(approval.answered_at)}`.trim();
  const verb = approval.approved ? "approved" : approval.answered_by ? "rejected" : "not run";
  // Nobody answered: the session closed it (a cancel, a stop), no person rejected it.
  const by = approval.answered_by ? ` by ${approval.answered_by}` : " (closed by the session)";
  const at = approval.answered_at ? ` at ${when(approval.answered_at)}` : "";
  const reason = approval.reason ? `: ${approval.reason}` : "";
  return `${verb}${by}${at}${reason}`;
}

// -- keyboard -------------------------------------------------------------------------------

function toggleHelp() {
  const help = document.getElementById("help");
  help.hidden = !help.hidden;
}

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

document.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target instanceof HTMLTextAreaElement && event.target.form) {
    event.preventDefault();
    event.target.form.requestSubmit();
    return;
  }
  if (event.key === "Escape") {
    document.getElementById("help").hidden = true;
    return;
  }
  if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "?") {
    event.preventDefault();
    toggleHelp();
    return;
  }
  if (!current) return;
  const box = document.querySelector("#pending .interrupt[data-kind='approval']:not(.answered)");
  if (!box) return;
  if (event.key === "a") {
    event.preventDefault();
    box.querySelector(".approve").click();
  } else if (event.key === "r") {
    event.preventDefault();
    box.querySelector(".reason").focus();
  }
});

// -- start ----------------------------------------------------------------------------------

document.getElementById("help-close").addEventListener("click", () => (document.getElementById("help").hidden = true));
window.addEventListener("hashchange", () => {
  if (location.hash.startsWith("#code=")) loginFromFragment().then(route);
  else route();
});
loginFromFragment().then(route);
