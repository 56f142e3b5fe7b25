// The sessionflow web console: plain JavaScript, no build step, no third-party code.
// Security rules this file keeps:
// - Everything a model, a tool or a user wrote is inserted as text (textContent or text
//   nodes, through `el`); nothing here ever parses markup from a string.
// - The token lives in sessionStorage and travels only in the Authorization header.
"use strict";

const API = "/api/v1";
const TOKEN_KEY = "sessionflow.token";
const USER_KEY = "sessionflow.user";
const LAST_EVENT_PREFIX = "sessionflow.last-event.";
const POLICIES = ["enqueue", "interrupt", "reject"];

let current = null; // the open session view's state, or null
let poller = null; // re-reads a list view: the lists come from search attributes, which lag a little
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
  const main = document.getElementById("main");
  main.replaceChildren(...nodes);
}

function say(text) {
  document.getElementById("status").textContent = text || "";
}

// -- API ------------------------------------------------------------------------------------

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

async function api(method, path, body) {
  const headers = authHeaders();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(API + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
    cache: "no-store",
  });
  let data = null;
  try {
    data = await response.json();
  } catch (_) {
    data = null;
  }
  if (response.status === 401 && path !== "/login") {
    sessionStorage.removeItem(TOKEN_KEY);
    showLoggedOut();
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

const sid = (id) => encodeURIComponent(id);

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
  } catch (error) {
    say(`Login failed: ${error.message}`);
  }
}

function showLoggedOut() {
  document.getElementById("who").textContent = "";
  show(
    el("h1", {}, "Not logged in"),
    el("p", {}, "Open the one-time login link that `sessionflow serve` printed (it ends in #code=…)."),
  );
}

// -- routing --------------------------------------------------------------------------------

async function route() {
  if (current) {
    current.close();
    current = null;
  }
  clearInterval(poller);
  poller = null;
  say("");
  if (!sessionStorage.getItem(TOKEN_KEY)) return showLoggedOut();
  document.getElementById("who").textContent = sessionStorage.getItem(USER_KEY) || "";
  const hash = location.hash || "#/sessions";
  try {
    if (hash.startsWith("#/s/")) {
      current = new SessionView(decodeURIComponent(hash.slice(4)));
      await current.open();
    } else if (hash === "#/inbox") {
      await renderInbox();
    } else {
      await renderSessions();
    }
  } catch (error) {
    say(error.message);
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

// -- sessions list --------------------------------------------------------------------------

function policySelect(id, withDefault) {
  const options = withDefault ? [el("option", { value: "" }, "session's policy")] : [];
  return el("select", { id }, options, POLICIES.map((p) => el("option", { value: p }, p)));
}

async function renderSessions() {
  const message = el("textarea", { id: "new-message", placeholder: "First message (optional)" });
  const policy = policySelect("new-policy", false);
  const start = async (event) => {
    event.preventDefault();
    try {
      const body = { double_texting: policy.value };
      if (message.value.trim()) body.message = message.value;
      const created = await api("POST", "/sessions", body);
      location.hash = `#/s/${sid(created.session_id)}`;
    } catch (error) {
      say(error.message);
    }
  };
  const list = el("div", { id: "session-list" });
  show(
    el("h1", {}, "Sessions"),
    el(
      "form",
      { className: "controls send", id: "new-session", onsubmit: start },
      message,
      el("label", {}, "Double-texting ", policy),
      el("button", { type: "submit", id: "start" }, "Start session"),
    ),
    list,
  );
  const fill = async () => {
    const { sessions } = await api("GET", "/sessions");
    const rows = sessions.map((s) =>
      el(
        "tr",
        { dataset: { session: s.session_id } },
        el("td", {}, el("a", { href: `#/s/${sid(s.session_id)}` }, s.session_id)),
        el("td", {}, s.status),
        el("td", {}, s.pending_approvals ? el("span", { className: "badge pending" }, `${s.pending_approvals} pending`) : ""),
        el("td", { className: "muted" }, s.last_activity || s.start_time || ""),
      ),
    );
    list.replaceChildren(
      sessions.length
        ? el("table", { id: "sessions" }, el("tr", {}, ["Session", "Status", "Approvals", "Last activity"].map((h) => el("th", {}, h))), rows)
        : el("p", { className: "muted" }, "No sessions yet."),
    );
  };
  await fill();
  poll(fill);
}

function poll(fill) {
  poller = setInterval(() => {
    if (document.visibilityState === "visible") fill().catch((error) => say(error.message));
  }, POLL_MS);
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
      list.append(
        el(
          "div",
          { dataset: { inbox: item.interrupt.interrupt_id } },
          el("a", { href: `#/s/${sid(item.session_id)}` }, item.session_id),
          interruptBox(item.session_id, item.interrupt, () => fill().then(refreshInboxCount)),
        ),
      );
    }
    const empty = list.querySelector("#inbox-empty");
    if (interrupts.length && empty) empty.remove();
    if (!interrupts.length && !empty) list.append(el("p", { className: "muted", id: "inbox-empty" }, "Nothing waits for you."));
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

function interruptBox(sessionId, interrupt, after) {
  const path = `/sessions/${sid(sessionId)}/interrupts/${encodeURIComponent(interrupt.interrupt_id)}`;
  const resolve = async (body) => {
    try {
      await api("POST", path, body);
      await after();
    } catch (error) {
      say(error.message);
    }
  };
  const countdown = interrupt.deadline
    ? el("span", { className: "countdown", dataset: { deadline: interrupt.deadline } }, remaining(interrupt.deadline))
    : null;
  const box = el("div", { className: "interrupt", dataset: { interrupt: interrupt.interrupt_id } });
  if (interrupt.kind === "question") {
    const answer = el("input", { type: "text", className: "answer", placeholder: "Your answer" });
    box.append(
      el("strong", {}, "Question: "),
      el("span", { className: "question" }, interrupt.question || interrupt.tool_name),
      " ",
      countdown || "",
      el("div", { className: "controls" }, answer, el("button", { className: "answer-button", onclick: () => resolve({ value: answer.value }) }, "Answer")),
    );
  } else {
    const reason = el("input", { type: "text", className: "reason", placeholder: "Reason (sent to the model)" });
    box.append(
      el("strong", {}, "Approve "),
      el("code", {}, interrupt.tool_name),
      "? ",
      countdown || "",
      el("pre", { className: "arguments" }, interrupt.arguments),
      el(
        "div",
        { className: "controls" },
        el("button", { className: "approve", onclick: () => resolve({ approved: true }) }, "Approve"),
        reason,
        el("button", { className: "reject", onclick: () => resolve(reason.value.trim() ? { approved: false, reason: reason.value } : { approved: false }) }, "Reject"),
      ),
    );
  }
  return box;
}

setInterval(() => {
  for (const node of document.querySelectorAll(".countdown")) node.textContent = remaining(node.dataset.deadline);
}, 1000);

// -- one session ----------------------------------------------------------------------------

class SessionView {
  constructor(id) {
    this.id = id;
    this.lastSequence = 0;
    this.live = new Map(); // "turn|step" -> {attempt, text, node}
    this.abort = new AbortController();
    this.refreshing = null;
    this.again = false;
    this.closed = false;
  }

  close() {
    this.closed = true;
    this.abort.abort();
  }

  async open() {
    this.title = el("h1", {}, this.id);
    this.meta = el("p", { className: "muted", id: "session-meta" });
    this.transcript = el("div", { id: "transcript" });
    this.liveArea = el("div", { id: "live" });
    this.tools = el("div", { id: "tools" });
    this.pending = el("div", { id: "pending" });
    const text = el("textarea", { id: "message", placeholder: "Message" });
    const policy = policySelect("policy", true);
    const send = async (event) => {
      event.preventDefault();
      if (!text.value.trim()) return;
      const body = { message_id: crypto.randomUUID(), text: text.value };
      if (policy.value) body.double_texting = policy.value;
      try {
        await api("POST", `/sessions/${sid(this.id)}/messages`, body);
        text.value = "";
        this.refresh();
      } catch (error) {
        say(error.code === "turn_running" ? "A turn is running and this session rejects messages until it ends." : error.message);
      }
    };
    const forkTurn = el("input", { type: "number", id: "fork-turn", min: 1, value: 1 });
    show(
      this.title,
      this.meta,
      el(
        "div",
        { className: "controls" },
        el("button", { id: "cancel", onclick: () => this.cancel() }, "Cancel turn"),
        el("label", {}, "Fork at turn ", forkTurn),
        el("button", { id: "fork", onclick: () => this.fork(Number(forkTurn.value)) }, "Fork"),
      ),
      this.transcript,
      this.tools,
      this.liveArea,
      this.pending,
      el("form", { className: "controls send", id: "send", onsubmit: send }, text, el("label", {}, "If a turn runs: ", policy), el("button", { type: "submit" }, "Send")),
    );
    await this.refresh();
    this.stream();
  }

  async cancel() {
    try {
      const answer = await api("POST", `/sessions/${sid(this.id)}/cancel`);
      say(answer.cancelled ? "" : "No turn was running.");
    } catch (error) {
      say(error.message);
    }
  }

  async fork(turn) {
    try {
      const answer = await api("POST", `/sessions/${sid(this.id)}/fork`, { turn });
      location.hash = `#/s/${sid(answer.session_id)}`;
    } catch (error) {
      say(error.message);
    }
  }

  // Stored messages and the snapshot are the truth; refreshes never overlap.
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
          say(error.message);
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
        this.transcript.append(this.messageNode(stored));
        this.lastSequence = Math.max(this.lastSequence, stored.sequence);
      }
      if (page.next_after === null || page.next_after === undefined || page.messages.length === 0) break;
    }
    const snapshot = await api("GET", `/sessions/${sid(this.id)}`);
    if (this.closed) return;
    const state = snapshot.state || {};
    const parts = [`status: ${snapshot.stopped ? "stopped" : state.status || "starting"}`, `turns: ${state.turn_count || 0}`, `double-texting: ${snapshot.double_texting}`];
    if (snapshot.forked_from) parts.push(`forked from ${snapshot.forked_from.session_id} at turn ${snapshot.forked_from.turn}`);
    if (state.last_turn_error) parts.push(`last error: ${state.last_turn_error}`);
    this.meta.textContent = parts.join(" · ");
    this.meta.dataset.status = snapshot.stopped ? "stopped" : state.status || "";
    // A tool line the user unfolded stays unfolded across refreshes.
    const unfolded = new Set([...this.tools.querySelectorAll("details[open]")].map((node) => node.dataset.call));
    this.tools.replaceChildren(...snapshot.tool_calls.map((call) => this.toolNode(call, unfolded.has(call.tool_call_id))));
    // Boxes still pending stay as they are, so a reason or an answer being typed survives a refresh.
    const wanted = new Set(snapshot.pending_interrupts.map((i) => i.interrupt_id));
    for (const box of this.pending.querySelectorAll("[data-interrupt]")) if (!wanted.has(box.dataset.interrupt)) box.remove();
    const have = new Set([...this.pending.querySelectorAll("[data-interrupt]")].map((box) => box.dataset.interrupt));
    for (const i of snapshot.pending_interrupts) {
      if (!have.has(i.interrupt_id)) this.pending.append(interruptBox(this.id, i, () => this.refresh()));
    }
    if (state.status !== "running" && !state.turn_id) {
      this.liveArea.replaceChildren();
      this.live.clear();
    }
  }

  messageNode(stored) {
    const message = stored.message || {};
    const role = message.role || "system";
    const text = message.text === null || message.text === undefined ? "" : message.text;
    if (role === "tool") {
      return el("details", { className: "tool stored" }, el("summary", {}, "tool result"), el("pre", {}, text));
    }
    const match = /^turn-(\d+)$/.exec(stored.turn_id || "");
    const node = el("div", { className: `msg ${role}`, dataset: { sequence: stored.sequence, turn: stored.turn_id } }, el("span", { className: "text" }, text));
    if (role === "user" && match) node.dataset.turnNumber = match[1];
    return node;
  }

  toolNode(call, open) {
    const effect = call.policy && call.policy.effect ? call.policy.effect : "";
    const output = call.output !== null && call.output !== undefined ? call.output : call.error || call.rejection_message || "";
    return el(
      "details",
      { className: "tool", open: Boolean(open), dataset: { tool: call.tool_name, status: call.status, call: call.tool_call_id } },
      el("summary", {}, el("code", {}, call.tool_name), ` · ${effect} · `, el("span", { className: "tool-status" }, call.status)),
      el("pre", { className: "tool-arguments" }, call.arguments),
      el("pre", { className: "tool-output" }, output),
    );
  }

  // A step's attempts share a key; a higher attempt's text replaces a lower one's.
  onDelta(event) {
    const key = `${event.turn_id}|${event.step_execution_id}`;
    let entry = this.live.get(key);
    if (entry && event.attempt < entry.attempt) return;
    if (!entry || event.attempt > entry.attempt) {
      const node = entry ? entry.node : el("div", { className: "msg live", dataset: { turn: event.turn_id } });
      if (!entry) this.liveArea.append(node);
      entry = { attempt: event.attempt, text: "", node };
      this.live.set(key, entry);
    }
    if (event.type === "text_delta") {
      entry.text += String((event.data && event.data.text) || "");
      entry.node.textContent = entry.text;
    }
  }

  onEvent(event) {
    // A reload resumes the stream after the last durable event this tab saw.
    if (event.offset !== null && event.offset !== undefined) {
      sessionStorage.setItem(LAST_EVENT_PREFIX + this.id, String(event.offset));
    }
    if (event.type === "text_delta" || event.type === "attempt_restarted") return this.onDelta(event);
    if (event.type === "reasoning_delta" || event.type === "custom_event") return;
    if (event.type === "turn_completed" || event.type === "turn_failed") {
      for (const [key, entry] of this.live) {
        if (key.startsWith(`${event.turn_id}|`)) {
          entry.node.remove();
          this.live.delete(key);
        }
      }
    }
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
        const response = await fetch(`${API}/sessions/${sid(this.id)}/events`, { headers, signal: this.abort.signal, cache: "no-store" });
        if (!response.ok) throw new ApiError(response.status, null);
        if (await this.read(response.body)) return; // the session ended its stream
      } catch (error) {
        if (this.closed) return;
        if (error.status === 401 || error.status === 404) return say(error.message);
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

// -- start ----------------------------------------------------------------------------------

window.addEventListener("hashchange", () => {
  if (location.hash.startsWith("#code=")) loginFromFragment().then(route);
  else route();
});
loginFromFragment().then(route);
