/* research-engine console: fills the server-rendered shells from the JSON API (/api/research/v1).
   Plain JS, no build step: every call is fetch() or EventSource with the sign-in cookie, so the
   API's role checks (401 / 403) apply unchanged and are shown in the alert region. */
"use strict";
const API = "/api/research/v1";
const $ = (sel, root = document) => root.querySelector(sel);
const body = document.body;

function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v; else if (k === "html") node.innerHTML = v;
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}
function say(message, kind = "error") {
  const box = $("#alert");
  box.hidden = false; box.className = "alert " + kind; box.textContent = message;
}
class ApiError extends Error { constructor(status, detail) { super(detail); this.status = status; } }

async function api(path, { method = "GET", json, quiet = false } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (json !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(json); }
  const resp = await fetch(API + path, init);
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!resp.ok) {
    let detail = data && data.detail !== undefined ? data.detail : text;
    if (Array.isArray(detail)) detail = detail.map((d) => `${(d.loc || []).slice(1).join(".")}: ${d.msg}`).join("; ");
    const why = resp.status === 403 ? `Forbidden (403): ${detail}` : resp.status === 401 ? `Not signed in (401): ${detail}` : `${resp.status}: ${detail}`;
    if (!quiet) say(why);
    throw new ApiError(resp.status, why);
  }
  return data;
}
const when = (iso) => (iso ? new Date(iso).toLocaleString() : "—");

/* ---- Markdown (the report's own subset: headings, lists, quotes, bold, code, [N]) ---------- */
function inline(text) {
  let html = esc(text);
  html = html.replace(/`([^`]+)`/g, "<code>$1</code>");
  html = html.replace(/\*\*\[([A-Z_ ]+)\]\*\*/g, (m, tag) => `<span class="badge tag-${tag.toLowerCase().replace(/ /g, "-")}">${tag}</span>`);
  html = html.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
  html = html.replace(/\[(\d+)\](?!\()/g, '<a class="cite" href="#ref-$1" aria-label="reference $1">[$1]</a>');
  html = html.replace(/\[([^\]]+)\]\((https?:[^)]+)\)/g, '<a href="$2" rel="noopener">$1</a>');
  return html;
}
function renderMarkdown(md) {
  const out = [];
  let list = 0;
  const close = () => { while (list > 0) { out.push("</li></ul>"); list--; } };
  for (const raw of String(md || "").split("\n")) {
    const line = raw.replace(/\s+$/, "");
    let m;
    if (!line.trim()) { close(); continue; }
    if ((m = line.match(/^(#{1,4}) (.*)$/))) { close(); const n = Math.min(m[1].length + 1, 6); out.push(`<h${n}>${inline(m[2])}</h${n}>`); continue; }
    if ((m = line.match(/^(\s*)- > (.*)$/))) {
      out.push(`<details class="quote"><summary>Exact quote</summary><blockquote>${inline(m[2])}</blockquote></details>`); continue;
    }
    if ((m = line.match(/^(\s*)- (.*)$/))) {
      const depth = Math.floor(m[1].length / 2) + 1;
      if (depth > list) { while (list < depth) { out.push("<ul><li>"); list++; } }
      else { while (list > depth) { out.push("</li></ul>"); list--; } out.push("</li><li>"); }
      out.push(inline(m[2])); continue;
    }
    if ((m = line.match(/^> ?(.*)$/))) { close(); out.push(`<blockquote>${inline(m[1])}</blockquote>`); continue; }
    if ((m = line.match(/^\[(\d+)\] (.*)$/))) { close(); out.push(`<p class="ref" id="ref-${m[1]}">[${m[1]}] ${inline(m[2]).replace(/<a class="cite"[^>]*>\[\d+\]<\/a>/g, "")}</p>`); continue; }
    close(); out.push(`<p>${inline(line)}</p>`);
  }
  close();
  return out.join("\n");
}

/* ---- Report view (review / verification / source-list report) ----------------------------- */
function renderReport(view, target) {
  target.innerHTML = "";
  const head = el("div", { class: "report-head" },
    el("p", {}, el("span", { class: `badge status-${view.status}`, text: view.status }), " ",
      `${view.kind} · version ${view.version ?? view.current_version} · updated ${when(view.updated_at)}`));
  if (view.stale_reason) head.append(el("p", { class: "warn", role: "note", text: `Stale: ${view.stale_reason}` }));
  target.append(head, el("article", { class: "markdown", html: renderMarkdown(view.markdown) }));
  const check = view.citation_check || {};
  if (Object.keys(check).length) {
    const ok = check.ok ?? (check.problems ? check.problems.length === 0 : undefined);
    target.append(el("details", { class: "panel", open: true }, el("summary", { text: `Citation check${ok === undefined ? "" : ok ? ": all citations verified" : ": problems found"}` }),
      el("pre", { text: JSON.stringify(check, null, 2) })));
  }
  const review = view.review || {};
  if (Object.keys(review).length) {
    target.append(el("details", { class: "panel" }, el("summary", { text: `Peer review: ${review.outcome || review.verdict || ""}` }),
      el("pre", { text: JSON.stringify(review, null, 2) })));
  }
  if (view.diff) target.append(el("details", { class: "panel" }, el("summary", { text: "Changes since the previous version" }), el("pre", { text: JSON.stringify(view.diff, null, 2) })));
  const dl = el("p", { class: "downloads" }, "Download: ");
  for (const [fmt, label] of [["markdown", "Markdown"], ["pdf", "PDF"], ["bibtex", "BibTeX"], ["ris", "RIS"]]) {
    dl.append(el("a", { class: "button", href: `${API}/reports/${view.report_id}/export?format=${fmt}`, download: true, text: label }), " ");
  }
  target.append(dl);
  if (view.kind === "source_list") target.append(el("p", {}, el("a", { href: `/sources/${view.report_id}`, text: "Open as source-list cards" })));
}

/* ---- Live trace over the run-events SSE ---------------------------------------------------- */
const EVENT_TYPES = ["agent_start", "reasoning", "tool_call", "tool_result", "tool_progress", "message_chunk", "agent_end", "verdict", "result", "error", "done"];
function traceItem(ev, calls) {
  const who = `${ev.agent}${ev.iteration ? " · round " + ev.iteration : ""}`;
  switch (ev.type) {
    case "agent_start": return el("li", { class: "divider" }, el("h3", { text: `▶ ${who}` }));
    case "agent_end": return el("li", { class: "divider end", text: `■ ${ev.agent} ${ev.ok === false ? "failed" : "finished"}` });
    case "reasoning": return el("li", { class: "reasoning" }, el("span", { class: "who", text: ev.agent }), " ", ev.text);
    case "tool_call": {
      const d = el("details", { class: "tool" }, el("summary", {}, el("span", { class: "badge", text: "tool" }), ` ${ev.tool_id}`, el("span", { class: "tool-state", text: " … running" })),
        el("h4", { text: "Parameters" }), el("pre", { text: JSON.stringify(ev.params, null, 2) }));
      calls.set(ev.tool_call_id, d);
      return el("li", {}, d);
    }
    case "tool_progress": { const d = calls.get(ev.tool_call_id); if (d) { $(".tool-state", d).textContent = ` … ${ev.message}`; return null; } return el("li", { text: ev.message }); }
    case "tool_result": {
      const d = calls.get(ev.tool_call_id);
      const res = el("div", {}, el("h4", { text: ev.error ? "Error" : "Results" + (ev.truncated ? " (trimmed)" : "") }), el("pre", { text: ev.error || JSON.stringify(ev.results, null, 2) }));
      if (d) { d.append(res); $(".tool-state", d).textContent = ev.error ? " ✗ failed" : " ✓ done"; return null; }
      return el("li", {}, res);
    }
    case "message_chunk": return el("li", { class: "chunk", text: ev.text });
    case "verdict": return el("li", { class: "verdict" }, el("span", { class: `badge verdict-${String(ev.verdict).toLowerCase().replace(/[^a-z]+/g, "-")}`, text: ev.verdict }),
      ` ${who}${ev.confidence ? " · confidence " + ev.confidence : ""}`, Object.keys(ev.details || {}).length ? el("details", {}, el("summary", { text: "details" }), el("pre", { text: JSON.stringify(ev.details, null, 2) })) : null);
    case "result": return el("li", { class: "done", text: `Result ready after ${ev.iterations} round(s)` });
    case "error": return el("li", { class: "error", text: `Error: ${ev.message}` });
    case "done": return el("li", { class: "done", text: `Run ${ev.status}` });
  }
  return null;
}

function followRun(runId, { onDone, onResult } = {}) {
  const key = `run-last-id:${runId}`;
  const trace = $("#trace");
  const status = $("#run-status");
  const calls = new Map();
  const last = sessionStorage.getItem(key);
  const url = `${API}/runs/${encodeURIComponent(runId)}/events` + (last ? `?last_event_id=${encodeURIComponent(last)}` : "");
  if (last) trace.append(el("li", { class: "note", text: `Resumed after event ${last} (earlier events are above the reload).` }));
  const source = new EventSource(url, { withCredentials: true });
  status.textContent = "running";
  let count = 0;
  const handle = (msg) => {
    let ev;
    try { ev = JSON.parse(msg.data); } catch { return; }
    if (msg.lastEventId) sessionStorage.setItem(key, msg.lastEventId);
    const item = traceItem(ev, calls);
    if (item) { item.dataset.eventId = msg.lastEventId; item.dataset.type = ev.type; trace.append(item); }
    count += 1; status.textContent = `running · ${count} events`;
    if (ev.type === "result" && onResult) onResult(ev);
    if (ev.type === "done") {
      source.close();
      status.textContent = ev.status;
      $("#run-progress")?.setAttribute("value", "1"); $("#run-progress")?.setAttribute("max", "1");
      if (onDone) onDone(ev);
    }
  };
  for (const t of EVENT_TYPES) source.addEventListener(t, handle);
  source.onerror = () => { if (source.readyState !== EventSource.CLOSED) status.textContent = "reconnecting…"; };
  return source;
}

/* ---- Pages --------------------------------------------------------------------------------- */
const pages = {};

pages.ask = () => {
  const form = $("#ask");
  const label = $("#prompt-label");
  const labels = { question: "Question", verify: "Claim to verify", review: "Review topic", sources: "What should the sources cover?" };
  const sync = () => {
    const mode = form.mode.value;
    label.textContent = labels[mode];
    for (const p of form.querySelectorAll(".mode-params")) p.hidden = p.dataset.mode !== mode;
    if (mode === "sources") loadLimits();
  };
  const loadLimits = async () => {
    const box = $("#limits");
    try {
      const lim = await api(`/source-lists/limits/${encodeURIComponent(form.workspace.value || "default")}`, { quiet: true });
      box.textContent = `Admin-clamped limits for “${lim.workspace}”: at most ${lim.max_references} references, source types ${lim.allowed_source_types.join(", ") || "any"}, detail up to ${lim.detail_level_ceiling}, at most ${lim.max_scheduled_lists} schedules, no more often than every ${Math.round(lim.min_update_interval_s / 3600)} h. Larger values are clamped (the accepted request shows them).`;
      form.num_references.max = lim.max_references;
    } catch (e) {
      box.textContent = e.status === 403 ? "Workspace limits are set by an admin; requests above them are clamped and the accepted values shown after submitting." : `Limits unavailable (${e.message}).`;
    }
  };
  form.addEventListener("change", (e) => { if (e.target.name === "mode" || e.target.name === "workspace") sync(); });
  sync();
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const mode = form.mode.value;
    const text = form.prompt.value.trim();
    try {
      if (mode === "question") {
        const r = await api("/tasks", { method: "POST", json: { question: text, entity: form.entity.value.trim() || null } });
        location.href = `/task/${r.task_id}`;
      } else if (mode === "review") {
        const r = await api("/reviews", { method: "POST", json: { topic: text, max_iterations: Number(form.max_iterations.value) || 2 } });
        location.href = `/run/${r.run_id}?kind=review&id=${r.review_id}`;
      } else if (mode === "verify") {
        const claim = form.claim_id.value.trim();
        const r = await api("/verifications", { method: "POST", json: claim ? { claim_id: claim } : { statement: text } });
        location.href = `/run/${r.run_id}?kind=verification&id=${r.verification_id}`;
      } else {
        const json = { prompt: text, workspace: form.workspace.value || "default", source_type: form.source_type.value,
          num_references: Number(form.num_references.value) || 10, detail_level: form.detail_level.value,
          keywords: form.keywords.value.split(",").map((k) => k.trim()).filter(Boolean) };
        for (const k of ["date_from", "date_to", "update_frequency"]) if (form[k].value) json[k] = form[k].value;
        const r = await api("/source-lists", { method: "POST", json });
        sessionStorage.setItem(`accepted:${r.source_list_id}`, JSON.stringify(r.request));
        location.href = `/run/${r.run_id}?kind=source_list&id=${r.source_list_id}`;
      }
    } catch { /* shown in the alert region */ }
  });
  api("/source-lists?limit=10", { quiet: true }).then((rows) => {
    for (const r of rows) $("#recent").append(el("li", {}, el("a", { href: `/sources/${r.source_list_id}`, text: r.prompt || r.source_list_id }), ` · ${r.status}`));
  }).catch(() => {});
};

pages.run = () => {
  const { runId, kind, recordId } = body.dataset;
  const result = $("#result");
  const accepted = sessionStorage.getItem(`accepted:${recordId}`);
  if (accepted) result.prepend(el("details", { class: "panel" }, el("summary", { text: "Accepted request (after the admin's clamps)" }), el("pre", { text: JSON.stringify(JSON.parse(accepted), null, 2) })));
  const show = async () => {
    if (!recordId) return;
    try {
      const view = await api(`/reports/${recordId}`);
      renderReport(view, result);
    } catch { /* alert shown */ }
  };
  followRun(runId, { onDone: show });
};

pages.task = () => {
  const id = body.dataset.taskId;
  const status = $("#task-status");
  const trace = $("#trace");
  let lastStatus = "";
  const poll = async () => {
    let t;
    try { t = await api(`/tasks/${id}`, { quiet: true }); } catch (e) { status.textContent = e.message; setTimeout(poll, 1500); return; }
    if (t.status !== lastStatus) { trace.append(el("li", { class: "reasoning", text: `${new Date().toLocaleTimeString()} · ${t.status}` })); lastStatus = t.status; }
    status.textContent = t.status + (t.error ? ` (${t.error})` : "");
    if (t.claim && t.claim.status !== "pending") {
      $("#task-progress").setAttribute("value", "1"); $("#task-progress").setAttribute("max", "1");
      $("#task").innerHTML = ""; $("#task").append(claimView(t.claim, t));
      return;
    }
    if (t.claim) { $("#task").innerHTML = ""; $("#task").append(claimView(t.claim, t)); }
    if (["failed", "cancelled"].includes(t.status)) return;
    setTimeout(poll, 1000);
  };
  poll();
};

function claimView(c, task) {
  const box = el("article", { class: "claim" });
  box.append(el("h1", {}, c.statement), el("p", {}, el("span", { class: `badge status-${c.status}`, text: c.status }),
    ` confidence ${Number(c.confidence).toFixed(2)} · entity ${c.entity ?? "—"} · model ${c.model} · ${when(c.created_at)}`));
  box.append(el("p", {}, "Question: ", c.question, " · ", el("a", { href: `/claim/${c.claim_id}`, text: "claim page" })));
  const sup = el("ol", { class: "supports" });
  (c.supports || []).forEach((s, i) => sup.append(el("li", { id: `ref-${i + 1}` }, el("strong", { text: s.title || s.source_id }), ` (${s.source_id}${s.locator ? ", " + s.locator : ""})`,
    el("details", { class: "quote", open: true }, el("summary", { text: "Exact quote" }), el("blockquote", { text: s.quote })))));
  box.append(el("h2", { text: "Supports" }), sup);
  if (c.verdict) box.append(el("h2", { text: "Verdict" }), el("p", {}, el("span", { class: `badge verdict-${c.verdict.verdict}`, text: c.verdict.verdict }), ` score ${c.verdict.score} · ${c.verdict.model} · ${when(c.verdict.decided_at)}`), el("p", { text: c.verdict.reasoning }));
  return box;
}

pages.claim = async () => {
  const id = body.dataset.claimId;
  const root = $("#claim");
  let c;
  try { c = await api(`/claims/${id}`); } catch { root.textContent = "Claim not available."; return; }
  root.innerHTML = ""; root.append(claimView(c));
  const chain = el("ul");
  if (c.supersedes) chain.append(el("li", {}, "Supersedes ", el("a", { href: `/claim/${c.supersedes}`, text: c.supersedes })));
  if (c.superseded_by) chain.append(el("li", {}, "Superseded by ", el("a", { href: `/claim/${c.superseded_by}`, text: c.superseded_by })));
  if (!chain.children.length) chain.append(el("li", { text: "Not part of a supersede chain." }));
  root.append(el("h2", { text: "Supersede chain" }), chain);
  const history = el("ol", { class: "history" });
  root.append(el("h2", { text: "Verdict history" }), history);
  const findings = el("ul");
  root.append(el("h2", { text: "Findings" }), findings);
  root.append(el("h2", { text: "Task" }), el("p", {}, el("a", { href: `/task/${c.task_id}`, text: c.task_id })));
  api(`/audit?claim_id=${id}&limit=200`, { quiet: true }).then((rows) => {
    const verdicts = rows.filter((r) => /verdict|decided|reconsider|supersed|stale|timeout/.test(r.action));
    for (const r of verdicts) history.append(el("li", {}, `${when(r.occurred_at)} · ${r.action} `, el("code", { text: JSON.stringify(r.payload) })));
    if (!verdicts.length) history.append(el("li", { text: "No verdict events recorded." }));
  }).catch(() => history.append(el("li", { text: "Verdict history needs the audit log (reader role)." })));
  api(`/findings?unresolved=false&limit=500`, { quiet: true }).then((rows) => {
    const mine = rows.filter((f) => (f.claim_ids || []).includes(id));
    for (const f of mine) findings.append(el("li", {}, el("span", { class: "badge", text: f.kind }), ` ${f.agent} · ${when(f.created_at)}${f.resolved_at ? " · resolved" : ""}`));
    if (!mine.length) findings.append(el("li", { text: "No findings about this claim." }));
  }).catch(() => {});
};

pages.ledger = () => {
  const form = $("#claims-filter");
  const load = async () => {
    const q = new URLSearchParams({ limit: "200" });
    if ($("#c-status").value) q.set("status", $("#c-status").value);
    if ($("#c-entity").value.trim()) q.set("entity", $("#c-entity").value.trim());
    const tbody = $("#claims"); tbody.innerHTML = "";
    let rows = [];
    try { rows = await api(`/claims?${q}`); } catch { return; }
    const needle = $("#c-q").value.trim().toLowerCase();
    for (const c of rows.filter((c) => !needle || `${c.statement} ${c.question} ${c.entity}`.toLowerCase().includes(needle))) {
      tbody.append(el("tr", {}, el("td", {}, el("a", { href: `/claim/${c.claim_id}`, text: c.statement })), el("td", { text: c.entity ?? "" }),
        el("td", {}, el("span", { class: `badge status-${c.status}`, text: c.status })), el("td", { text: Number(c.confidence).toFixed(2) }), el("td", { text: when(c.created_at) })));
    }
    if (!tbody.children.length) tbody.append(el("tr", {}, el("td", { colspan: "5", text: "No claims match." })));
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); load(); });
  $("#open-report").addEventListener("submit", (e) => { e.preventDefault(); location.href = `/report/${$("#report-id").value.trim()}`; });
  load();
};

pages.findings = () => {
  const load = async () => {
    const q = new URLSearchParams({ limit: "200", unresolved: String($("#f-unresolved").checked) });
    if ($("#f-kind").value.trim()) q.set("kind", $("#f-kind").value.trim());
    const tbody = $("#findings"); tbody.innerHTML = "";
    let rows = [];
    try { rows = await api(`/findings?${q}`); } catch { return; }
    for (const f of rows) {
      const claims = el("td"); for (const c of f.claim_ids || []) claims.append(el("a", { href: `/claim/${c}`, text: c.slice(0, 8) }), " ");
      tbody.append(el("tr", {}, el("td", {}, el("span", { class: "badge", text: f.kind })), el("td", { text: f.agent }), claims,
        el("td", {}, el("details", {}, el("summary", { text: "payload" }), el("pre", { text: JSON.stringify(f.payload, null, 2) }))), el("td", { text: when(f.created_at) }), el("td", { text: when(f.resolved_at) })));
    }
    if (!rows.length) tbody.append(el("tr", {}, el("td", { colspan: "6", text: "No findings." })));
  };
  $("#findings-filter").addEventListener("submit", (e) => { e.preventDefault(); load(); });
  load();
};

pages.report = async () => {
  const id = body.dataset.reportId;
  try { renderReport(await api(`/reports/${id}`), $("#result")); } catch { $("#result").textContent = "Report not available."; }
};

pages.sources = () => {
  const id = body.dataset.sourceListId;
  const cards = $("#sl-cards");
  const preferred = new Set(JSON.parse(sessionStorage.getItem(`preferred:${id}`) || "[]"));
  let list = null;
  const updateExport = () => { $("#sl-export").href = `${API}/source-lists/${id}/export?format=${$("#sl-format").value}`; };
  const draw = () => {
    cards.innerHTML = "";
    const needle = $("#sl-filter").value.trim().toLowerCase();
    const by = $("#sl-sort").value;
    const rows = list.sources.filter((s) => !needle || `${s.title} ${(s.authors || []).join(" ")} ${s.publication}`.toLowerCase().includes(needle));
    rows.sort((a, b) => by === "date" ? String(b.date || "").localeCompare(String(a.date || "")) : by === "publication" ? String(a.publication || "").localeCompare(String(b.publication || "")) : b.relevance_score - a.relevance_score);
    for (const s of rows) {
      const pct = Math.round(100 * Math.max(0, Math.min(1, s.relevance_score)));
      const card = el("li", { class: "card source", "data-source-id": s.source_id },
        el("h2", {}, s.url ? el("a", { href: s.url, rel: "noopener", target: "_blank", text: s.title }) : s.title,
          preferred.has(s.source_id) ? el("span", { class: "badge preferred", text: "★ preferred" }) : null),
        el("p", { class: "meta", text: [(s.authors || []).slice(0, 4).join(", "), s.publication, s.date].filter(Boolean).join(" · ") }),
        el("div", { class: "relevance" }, el("span", { text: `Relevance ${pct}%` }), el("meter", { min: "0", max: "100", value: String(pct), "aria-label": `relevance ${pct} percent` })));
      const more = el("details", {}, el("summary", { text: "Summary, extract and facts" }), el("p", { text: s.summary }));
      if (s.extract) more.append(el("blockquote", { text: s.extract }));
      if (s.facts && s.facts.length) { const ul = el("ul"); for (const f of s.facts) ul.append(el("li", {}, el("span", { class: "badge", text: f.confidence }), " ", f.statement)); more.append(ul); }
      card.append(more);
      const can = body.dataset.role !== "reader";
      const act = el("div", { class: "toolbar" },
        el("button", { type: "button", "data-action": preferred.has(s.source_id) ? "unprefer" : "prefer", disabled: !can, text: preferred.has(s.source_id) ? "Unflag preferred" : "Flag preferred" }),
        el("button", { type: "button", "data-action": "remove", class: "danger", disabled: !can, text: "Remove" }));
      card.append(act);
      cards.append(card);
    }
    if (!rows.length) cards.append(el("li", { class: "note", text: "No sources." }));
  };
  cards.addEventListener("click", async (e) => {
    const btn = e.target.closest("button[data-action]"); if (!btn) return;
    const sid = btn.closest("[data-source-id]").dataset.sourceId;
    try {
      await api(`/source-lists/${id}/sources/${sid}`, { method: "POST", json: { action: btn.dataset.action } });
      if (btn.dataset.action === "remove") list.sources = list.sources.filter((s) => s.source_id !== sid);
      else if (btn.dataset.action === "prefer") preferred.add(sid); else preferred.delete(sid);
      sessionStorage.setItem(`preferred:${id}`, JSON.stringify([...preferred]));
      say(`Source ${btn.dataset.action === "remove" ? "removed" : btn.dataset.action === "prefer" ? "flagged preferred" : "unflagged"}.`, "ok");
      draw();
    } catch { /* alert shown */ }
  });
  const loadRuns = async () => {
    try {
      const r = await api(`/source-lists/${id}/runs`, { quiet: true });
      $("#sl-schedule").textContent = r.schedule ? `${r.schedule.status} · ${r.schedule.update_frequency} · next ${when(r.schedule.next_run_at)}` : "not scheduled";
      const ol = $("#sl-runs"); ol.innerHTML = "";
      for (const run of r.runs) ol.append(el("li", {}, `${when(run.at)} · ${run.status}${run.trigger ? " · " + run.trigger : ""}${run.sources != null ? " · " + run.sources + " sources" : ""} `,
        run.run_id ? el("a", { href: `/run/${run.run_id}?kind=source_list&id=${id}`, text: "trace" }) : null));
    } catch { $("#sl-schedule").textContent = "unavailable"; }
  };
  for (const b of document.querySelectorAll("button[data-schedule]")) b.addEventListener("click", async () => {
    try { const r = await api(`/source-lists/${id}/schedule`, { method: "PATCH", json: { action: b.dataset.schedule } }); say(`Schedule ${r.schedule ? r.schedule.status : b.dataset.schedule}.`, "ok"); loadRuns(); } catch { /* alert */ }
  });
  $("#sl-filter").addEventListener("input", () => list && draw());
  $("#sl-sort").addEventListener("change", () => list && draw());
  $("#sl-format").addEventListener("change", updateExport);
  updateExport();
  api(`/source-lists/${id}`).then((l) => {
    list = l; $("#sl-title").textContent = l.prompt;
    $("#sl-meta").textContent = `${l.source_type} · ${l.detail_level} · keywords ${l.keywords.join(", ")} · generated ${when(l.generated_at)}`;
    draw();
  }).catch(() => {});
  loadRuns();
};

pages.operate = () => {
  for (const card of document.querySelectorAll("[data-agent]")) {
    const agent = card.dataset.agent;
    const show = (r) => { $(".agent-state", card).textContent = r.state ?? String(r.status); $(".agent-detail", card).textContent = JSON.stringify(r.detail ?? r, null, 2); };
    card.addEventListener("click", async (e) => {
      const b = e.target.closest("button[data-verb]"); if (!b) return;
      try {
        const r = b.dataset.verb === "status" ? await api(`/${agent}/status`) : await api(`/${agent}/${b.dataset.verb}`, { method: "POST" });
        show(r); if (b.dataset.verb !== "status") say(`${agent}: ${b.dataset.verb} → ${r.state ?? r.status}`, "ok");
      } catch (err) { $(".agent-state", card).textContent = err.message; }
    });
    api(`/${agent}/status`, { quiet: true }).then(show).catch((err) => { $(".agent-state", card).textContent = err.message; });
  }
  $("#drain").addEventListener("click", async () => {
    try { $("#drain-result").textContent = JSON.stringify(await api("/critic/quarantine/drain", { method: "POST" }), null, 2); } catch { /* alert */ }
  });
  api("/audit?action=consumer.dead_letter&limit=100", { quiet: true }).then((rows) => {
    const tb = $("#dead-letters");
    for (const r of rows) tb.append(el("tr", {}, el("td", { text: when(r.occurred_at) }), el("td", { text: r.service }), el("td", {}, el("code", { text: r.payload.subject ?? "" })), el("td", { text: r.payload.reason ?? "" })));
    if (!rows.length) tb.append(el("tr", {}, el("td", { colspan: "4", text: "No dead letters." })));
  }).catch((e) => $("#dead-letters").append(el("tr", {}, el("td", { colspan: "4", text: e.message }))));
};

document.addEventListener("DOMContentLoaded", () => { const run = pages[body.dataset.page]; if (run) run(); });
