/* research-engine console: one function per page (body[data-page]), filling the server-rendered shell
   from the JSON API with the helpers of console.js (loaded first). */
"use strict";
/* ---- Pages --------------------------------------------------------------------------------- */
const pages = {};

pages.ask = () => {
  const form = $("#ask");
  /* "Edit configuration" on a source list: this form, pre-filled with the list's stored request. */
  const prefill = async (listId) => {
    try {
      const { request } = await api(`/source-lists/${encodeURIComponent(listId)}/runs`);
      form.mode.value = "sources";
      form.prompt.value = request.prompt || "";
      for (const k of ["workspace", "source_type", "num_references", "detail_level", "date_from", "date_to", "update_frequency"]) {
        if (request[k] === null || request[k] === undefined) continue;
        const field = form[k];
        if (field.tagName === "SELECT" && ![...field.options].some((o) => o.value === String(request[k]))) field.append(el("option", { value: request[k], text: request[k] }));
        field.value = request[k];
      }
      form.keywords.value = (request.keywords || []).join(", ");
      sync();
      $("#prefilled").hidden = false;
      $("#prefilled-link").href = `/sources/${listId}`;
      form.prompt.focus();
    } catch { /* alert */ }
  };
  const label = $("#prompt-label");
  const labels = { question: "Question", verify: "Claim to verify", review: "Review topic", sources: "What should the sources cover?" };
  /* each mode's request model and text field in the API's schema: the limits shown are the API's own */
  const models = { question: ["TaskSubmission", "question"], verify: ["VerificationRequest", "claim"], review: ["ReviewRequest", "topic"], sources: ["SourceListRequest", "prompt"] };
  let schemas = {};
  const count = () => {
    const [model, field] = models[form.mode.value];
    const { maxLength, minLength } = limitsOf(schemas, model, field);
    const n = form.prompt.value.trim().length;
    const out = $("#prompt-count");
    out.textContent = maxLength ? `${n} / ${maxLength} characters${minLength ? ` (at least ${minLength})` : ""}${n > maxLength ? ` — ${n - maxLength} too many` : ""}` : "";
    out.classList.toggle("over", Boolean(maxLength && n > maxLength));
  };
  const sync = () => {
    const mode = form.mode.value;
    label.textContent = labels[mode];
    for (const p of form.querySelectorAll(".mode-params")) p.hidden = p.dataset.mode !== mode;
    if (mode === "sources") loadLimits();
    count();
  };
  requestSchemas().then((found) => {
    schemas = found;
    const rounds = limitsOf(schemas, "ReviewRequest", "max_iterations");
    if (rounds.maximum) {
      form.max_iterations.max = rounds.maximum; form.max_iterations.min = rounds.minimum ?? 1;
      $("#rounds-range").textContent = `${rounds.minimum ?? 1}–${rounds.maximum}`;
      if (Number(form.max_iterations.value) > rounds.maximum) form.max_iterations.value = rounds.maximum;
    }
    const refs = limitsOf(schemas, "SourceListRequest", "num_references");
    if (refs.maximum) form.num_references.max = refs.maximum;
    const entity = limitsOf(schemas, "TaskSubmission", "entity");
    if (entity.maxLength) form.entity.maxLength = entity.maxLength;
    count();
  });
  form.prompt.addEventListener("input", count);
  const loadLimits = async () => {
    const box = $("#limits");
    const asked = form.workspace.value || "default";
    const stale = () => (form.workspace.value || "default") !== asked;  // a later call owns the box
    try {
      const lim = await api(`/source-lists/limits/${encodeURIComponent(asked)}`, { quiet: true });
      if (stale()) return;
      box.textContent = `Admin-clamped limits for “${lim.workspace}”: at most ${lim.max_references} references, source types ${lim.allowed_source_types.join(", ") || "any"}, detail up to ${lim.detail_level_ceiling}, at most ${lim.max_scheduled_lists} schedules, no more often than every ${Math.round(lim.min_update_interval_s / 3600)} h. Larger values are clamped (the accepted request shows them).`;
    } catch (e) {
      if (stale()) return;
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
        const r = await api("/verifications", { method: "POST", json: { claim: text, watch: form.watch.checked } });
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
  const from = new URLSearchParams(location.search).get("from");
  if (from) prefill(from);
  api("/source-lists?limit=10", { quiet: true }).then((rows) => {
    for (const r of rows) $("#recent").append(el("li", {}, el("a", { href: `/sources/${r.source_list_id}`, text: r.prompt || r.source_list_id }), ` · ${r.status}`));
    if (!rows.length) $("#recent").append(el("li", { class: "note", text: "No source lists yet: choose “Source list” above." }));
  }).catch(() => {});
};

const KIND_LABELS = { review: "Literature review", verification: "Verification", source_list: "Source list" };
/* A page titled by what was asked (a topic, a claim, a prompt), not by an id. */
function titlePage(subject, kind) {
  if (!subject) return;
  $("#page-title").textContent = subject;
  const label = KIND_LABELS[kind];
  if (label && $("#page-kind")) $("#page-kind").textContent = label;
  document.title = `${subject} · research-engine`;
}

pages.run = () => {
  const { runId, kind, recordId } = body.dataset;
  const result = $("#result");
  const accepted = sessionStorage.getItem(`accepted:${recordId}`);
  const request = accepted && el("details", { class: "panel" }, el("summary", { text: "Accepted request (after the admin's clamps)" }), el("pre", { text: JSON.stringify(JSON.parse(accepted), null, 2) }));
  if (request) result.prepend(request);
  let shown = "";  // the status of the stored report on show: a finished run's result needs no live event
  const render = (view) => {
    renderReport(view, result);
    if (request) result.prepend(request);  // the report replaces what #result held: the request stays above it
  };
  const show = async () => {
    if (!recordId) return;
    try { render(await api(`/reports/${recordId}`)); } catch { /* alert shown */ }
  };
  const stored = recordId ? api(`/reports/${recordId}`, { quiet: true }).catch(() => null) : Promise.resolve(null);
  stored.then((view) => {
    if (!view) return;
    titlePage(view.subject, view.kind);
    /* finished (this run or a later one): its stored version now; a run still going shows it at `done` */
    if (view.status !== "running" && view.version) {
      shown = view.status; render(view);
      $("#run-status").textContent = view.status;
      $("#run-progress")?.setAttribute("value", "1"); $("#run-progress")?.setAttribute("max", "1");
    }
  });
  followRun(runId, { onDone: () => { if (!shown) show(); }, finished: () => shown });
};

pages.task = () => {
  const id = body.dataset.taskId;
  const status = $("#task-status");
  const trace = $("#trace");
  let lastStatus = "";
  let drafting = null;  // how the claim was drafted: fetched once, shown under every render
  const show = (t) => {
    $("#task").innerHTML = ""; $("#task").append(claimView(t.claim, t));
    drafting = drafting || draftUsage(t.claim.claim_id);
    drafting.then((view) => { if (view) $("#task").append(view); });
  };
  const poll = async () => {
    let t;
    try { t = await api(`/tasks/${id}`, { quiet: true }); } catch (e) { status.textContent = e.message; setTimeout(poll, 1500); return; }
    if (t.status !== lastStatus) { trace.append(el("li", { class: "reasoning", text: `${new Date().toLocaleTimeString()} · ${t.status}` })); lastStatus = t.status; }
    status.textContent = t.status + (t.error ? ` (${t.error})` : "");
    if (t.claim && t.claim.status !== "pending") {
      $("#task-progress").setAttribute("value", "1"); $("#task-progress").setAttribute("max", "1");
      show(t);
      return;
    }
    if (t.claim) show(t);
    if (["failed", "cancelled"].includes(t.status)) return;
    setTimeout(poll, 1000);
  };
  poll();
};

/* How the claim was drafted: the model's usage (the `research.claim.proposed` audit row's `llm_usage`) and, when
   the offline engine drafted instead, each provider's reason (`research.llm.provider_failed`). Needs the audit log. */
async function draftUsage(claimId) {
  let rows;
  try { rows = await api(`/audit?claim_id=${claimId}&limit=100`, { quiet: true }); } catch { return null; }
  const proposed = rows.find((r) => r.action === "research.claim.proposed");
  if (!proposed) return null;
  const failed = rows.filter((r) => r.action === "research.llm.provider_failed").reverse();
  const view = usageView({ ...(proposed.payload.llm_usage || {}), fallbacks: failed.length && proposed.payload.provider === "offline"
    ? [{ question: "claim_draft", reasons: failed.map((r) => `${r.payload.provider}: ${r.payload.reason}`) }] : [] });
  return view && el("section", { class: "drafting", "aria-label": "Drafting" }, el("h2", { text: "Drafting" }), view);
}

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
  for (const older of [].concat(c.supersedes || []).filter(Boolean)) chain.append(el("li", {}, "Supersedes ", el("a", { href: `/claim/${older}`, text: older })));
  if (c.superseded_by) chain.append(el("li", {}, "Superseded by ", el("a", { href: `/claim/${c.superseded_by}`, text: c.superseded_by })));
  if (!chain.children.length) chain.append(el("li", { text: "Not part of a supersede chain." }));
  root.append(el("h2", { text: "Supersede chain" }), chain);
  const history = el("ol", { class: "history" });
  root.append(el("h2", { text: "Verdict history" }), history);
  const findings = el("ul");
  root.append(el("h2", { text: "Findings" }), findings);
  root.append(el("h2", { text: "Task" }), el("p", {}, el("a", { href: `/task/${c.task_id}`, text: c.task_id })));
  api(`/audit?claim_id=${id}&limit=200`, { quiet: true }).then((rows) => {
    const verdicts = rows.filter((r) => /verdict|decided|reconsider|promoted|rejected|supersed|stale|timeout|recritique|quarantine/.test(r.action));
    for (const r of verdicts) {
      const said = Object.entries(r.payload || {}).filter(([, v]) => v !== null && v !== "" && typeof v !== "object").map(([k, v]) => `${k.replace(/_/g, " ")} ${v}`);
      history.append(el("li", {}, `${when(r.occurred_at)} · ${r.action.split(".").slice(-2).join(" ").replace(/_/g, " ")}`, said.length ? el("span", { class: "note", text: ` (${said.join(", ")})` }) : null));
    }
    if (!verdicts.length) history.append(el("li", { text: c.verdict ? "The verdict above is the only one recorded." : "No verdict yet." }));
  }).catch(() => history.append(el("li", { text: "Verdict history needs the audit log (reader role)." })));
  api(`/findings?unresolved=false&limit=500`, { quiet: true }).then((rows) => {
    const mine = rows.filter((f) => (f.claim_ids || []).includes(id));
    for (const f of mine) findings.append(el("li", {}, el("span", { class: "badge", text: f.kind }), ` ${f.agent} · ${when(f.created_at)}${f.resolved_at ? " · resolved" : ""}`));
    if (!mine.length) findings.append(el("li", { text: "No findings about this claim." }));
  }).catch(() => {});
};

/* Each listed report's topic, claim or prompt (the audit row holds only its key words), a few requests at a time. */
async function fillTitles(links) {
  const next = async () => {
    for (let item = links.shift(); item; item = links.shift()) {
      const [id, link] = item;
      try { const view = await api(`/reports/${id}`, { quiet: true }); if (view.subject) link.textContent = view.subject; } catch { /* keeps the key words */ }
    }
  };
  await Promise.all([next(), next(), next(), next()]);
}

/* The ledger's claims and the reports it holds, each list a page at a time (*Show more*). */
const PAGE_SIZE = 50;  // rows a long list (My work, the ledger's claims and reports) shows at a time
const MOST_CLAIMS = 500;  // GET /claims's own bound
const MOST_REPORTS = 1000;  // GET /audit's own bound
pages.ledger = () => {
  const form = $("#claims-filter");
  const moreClaims = $("#claims-more");
  let claimLimit = PAGE_SIZE;
  let asking = 0;
  const load = async () => {
    const q = new URLSearchParams({ limit: String(claimLimit) });
    if ($("#c-status").value) q.set("status", $("#c-status").value);
    if ($("#c-entity").value.trim()) q.set("entity", $("#c-entity").value.trim());
    const asked = ++asking;  // a slower earlier answer never replaces a later one
    let rows = [];
    try { rows = await api(`/claims?${q}`); } catch { return; }
    if (asked !== asking) return;
    const tbody = $("#claims"); tbody.innerHTML = "";
    const needle = $("#c-q").value.trim().toLowerCase();
    for (const c of rows.filter((c) => !needle || `${c.statement} ${c.question} ${c.entity}`.toLowerCase().includes(needle))) {
      tbody.append(el("tr", {}, el("td", {}, el("a", { href: `/claim/${c.claim_id}`, text: c.statement })), el("td", { text: c.entity ?? "" }),
        el("td", {}, el("span", { class: `badge status-${c.status}`, text: c.status })), el("td", { text: Number(c.confidence).toFixed(2) }), el("td", { text: when(c.created_at) })));
    }
    const filtered = $("#c-status").value || $("#c-entity").value.trim() || needle;
    if (!tbody.children.length) tbody.append(el("tr", {}, el("td", { colspan: "5", text: filtered ? "No claims match." : "No claims yet: a question asked on the Ask page, or a review's findings, become claims here." })));
    moreClaims.hidden = rows.length < claimLimit || claimLimit >= MOST_CLAIMS;
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); claimLimit = PAGE_SIZE; load(); });
  moreClaims.addEventListener("click", () => { claimLimit = Math.min(claimLimit + PAGE_SIZE, MOST_CLAIMS); load(); });

  const reports = $("#reports");
  const moreReports = $("#reports-more");
  const listed = new Set();  // report ids shown: a later page appends only the reports not shown yet
  let reportLimit = PAGE_SIZE;
  const loadReports = () => Promise.all([api(`/audit?action=research.report.opened&limit=${reportLimit}`, { quiet: true }), api("/audit?action=research.report.stale&limit=1000", { quiet: true })])
    .then(([opened, stale]) => {
      const titles = [];
      const staleIds = new Set(stale.map((r) => String(r.subject_ids.report_id)));
      for (const r of opened) {
        const id = String(r.subject_ids.report_id);
        if (listed.has(id)) continue;
        listed.add(id);
        const link = el("a", { href: r.payload.kind === "source_list" ? `/sources/${id}` : `/report/${id}`, text: r.payload.subject_key || `${KIND_LABELS[r.payload.kind] || r.payload.kind} ${id.slice(0, 8)}` });
        reports.append(el("li", { "data-report-id": id }, el("span", { class: "badge", text: KIND_LABELS[r.payload.kind] || r.payload.kind }), " ", link,
          ` · ${when(r.occurred_at)} `, staleIds.has(id) ? el("span", { class: "badge status-stale", text: "stale" }) : null));
        titles.push([id, link]);
      }
      fillTitles(titles);
      if (!opened.length) reports.append(el("li", { class: "note", text: "No reports yet: a review, verification or source list asked on the Ask page is listed here." }));
      moreReports.hidden = opened.length < reportLimit || reportLimit >= MOST_REPORTS;
      if (opened.length >= MOST_REPORTS) $("#reports-note").hidden = false;
    }).catch(() => { reports.append(el("li", { class: "note", text: "Reports are listed from the audit log (reader role)." })); moreReports.hidden = true; });
  moreReports.addEventListener("click", () => { reportLimit = Math.min(reportLimit + PAGE_SIZE, MOST_REPORTS); loadReports(); });
  $("#open-report").addEventListener("submit", (e) => { e.preventDefault(); location.href = `/report/${$("#report-id").value.trim()}`; });
  load();
  loadReports();
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
  try { const view = await api(`/reports/${id}`); titlePage(view.subject, view.kind); renderReport(view, $("#result")); } catch { $("#result").textContent = "Report not available."; }
};

/* A link out only for a web address: `corpus:…` ids and other schemes are no link a browser can open. */
const outside = (url) => /^https?:\/\/\S+$/i.test(String(url || ""));

pages.sources = () => {
  const id = body.dataset.sourceListId;
  const cards = $("#sl-cards");
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
        el("h2", {}, outsideUrl(s.url) ? el("a", { href: outsideUrl(s.url), rel: "noopener", target: "_blank", text: s.title }) : s.title,
          s.preferred ? el("span", { class: "badge preferred", text: "★ preferred" }) : null),
        el("p", { class: "meta", text: [(s.authors || []).slice(0, 4).join(", "), s.publication, s.date].filter(Boolean).join(" · ") }),
        s.origin_id ? el("p", {}, el("a", { class: "paper-link", href: paperHref(s.origin_id), text: "Paper page" })) : null,
        el("div", { class: "relevance" }, el("span", { text: `Relevance ${pct}%` }), el("meter", { min: "0", max: "100", value: String(pct), "aria-label": `relevance ${pct} percent` })));
      const more = el("details", {}, el("summary", { text: "Summary, extract and facts" }), el("p", { text: s.summary }));
      if (s.extract) more.append(el("blockquote", { text: s.extract }));
      if (s.facts && s.facts.length) { const ul = el("ul"); for (const f of s.facts) ul.append(el("li", {}, el("span", { class: "badge", text: f.confidence }), " ", f.statement)); more.append(ul); }
      card.append(more);
      const can = body.dataset.role !== "reader";
      const act = el("div", { class: "toolbar" },
        el("button", { type: "button", "data-action": s.preferred ? "unprefer" : "prefer", disabled: !can, text: s.preferred ? "Unflag preferred" : "Flag preferred" }),
        el("button", { type: "button", "data-action": "remove", class: "danger", disabled: !can, text: "Remove" }));
      card.append(act);
      cards.append(card);
    }
    if (!rows.length) cards.append(el("li", { class: "note", text: (list && list.note) || "No sources." }));
  };
  const loadList = () => api(`/source-lists/${id}`).then((l) => {
    list = l; $("#sl-title").textContent = l.prompt;
    $("#sl-meta").textContent = `${l.source_type} · ${l.detail_level} · keywords ${l.keywords.join(", ")} · generated ${when(l.generated_at)}`;
    draw();
  }).catch(() => {});
  cards.addEventListener("click", async (e) => {
    const btn = e.target.closest("button[data-action]"); if (!btn) return;
    const sid = btn.closest("[data-source-id]").dataset.sourceId;
    const action = btn.dataset.action;
    try {
      await api(`/source-lists/${id}/sources/${sid}`, { method: "POST", json: { action } });
      say(`Source ${action === "remove" ? "removed" : action === "prefer" ? "flagged preferred" : "unflagged"}.`, "ok");
      await loadList();  // the flag shown is the one the API stored
      $(`[data-source-id="${sid}"] button[data-action]`)?.focus();
    } catch { /* alert shown */ }
  });
  const loadRuns = async () => {
    try {
      const r = await api(`/source-lists/${id}/runs`, { quiet: true });
      $("#sl-schedule").textContent = r.schedule ? `${r.schedule.status} · ${r.schedule.update_frequency} · next ${when(r.schedule.next_run_at)}` : "not scheduled";
      /* a verb only where it applies: pause an active schedule, resume a paused one, cancel either */
      const state = r.schedule ? r.schedule.status : "";
      const applies = { pause: state === "active", resume: state === "paused", cancel: state === "active" || state === "paused" };
      for (const b of document.querySelectorAll("button[data-schedule]")) b.disabled = b.hasAttribute("data-denied") || !applies[b.dataset.schedule];
      showConfig(r.request || {});
      const ol = $("#sl-runs"); ol.innerHTML = "";
      for (const run of r.runs) {
        const li = el("li", { class: "run", "data-run-id": run.run_id || "" }, `${when(run.at)} · `, el("span", { class: `badge status-${run.status}`, text: run.status }),
          `${run.trigger ? " · " + run.trigger : ""}${run.sources != null ? " · " + run.sources + " sources" : ""}${run.error ? " · " + run.error : ""} `,
          run.run_id ? el("a", { href: `/run/${run.run_id}?kind=source_list&id=${id}`, text: "trace" }) : null);
        if (run.status === "completed") li.append(sourceListDiff(run.diff));
        ol.append(li);
      }
      if (!r.runs.length) ol.append(el("li", { class: "note", text: "No runs yet." }));
    } catch { $("#sl-schedule").textContent = "unavailable"; }
  };
  const showConfig = (req) => {
    const dl = $("#sl-config"); dl.innerHTML = "";
    for (const [k, v] of Object.entries(req)) {
      if (v === null || v === undefined || (Array.isArray(v) && !v.length)) continue;
      dl.append(el("dt", { text: k.replace(/_/g, " ") }), el("dd", { text: typeof v === "object" ? (Array.isArray(v) ? v.join(", ") : JSON.stringify(v)) : String(v) }));
    }
  };
  $("#sl-rerun").addEventListener("click", async () => {
    try { const r = await api(`/source-lists/${id}/runs`, { method: "POST" }); location.href = `/run/${r.run_id}?kind=source_list&id=${id}`; } catch { /* alert */ }
  });
  for (const b of document.querySelectorAll("button[data-schedule]")) b.addEventListener("click", async () => {
    try { const r = await api(`/source-lists/${id}/schedule`, { method: "PATCH", json: { action: b.dataset.schedule } }); say(`Schedule ${r.schedule ? r.schedule.status : b.dataset.schedule}.`, "ok"); loadRuns(); } catch { /* alert */ }
  });
  $("#sl-filter").addEventListener("input", () => list && draw());
  $("#sl-sort").addEventListener("change", () => list && draw());
  $("#sl-format").addEventListener("change", updateExport);
  updateExport();
  loadList();
  loadRuns();
};

/* An agent run in words: "completed 12 May, 10:02 (3 findings)" or its error. */
function agentRun(run) {
  if (!run) return "none yet";
  const all = run.counts || {};
  const counts = Object.entries(all).filter(([k, n]) => typeof n === "number" && !k.endsWith("_s")).map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`);
  if (typeof all.duration_s === "number") counts.push(`took ${all.duration_s.toFixed(1)} s`);
  return `${run.outcome || (run.finished_at ? "finished" : "running")} · ${when(run.finished_at || run.started_at)}${run.trigger ? ` · ${run.trigger}` : ""}${counts.length ? ` (${counts.join(", ")})` : ""}${run.error ? ` — ${run.error}` : ""}`;
}

pages.operate = () => {
  for (const row of document.querySelectorAll("[data-agent]")) {
    const agent = row.dataset.agent;
    const show = (r) => {
      const d = r.detail && typeof r.detail === "object" ? r.detail : {};
      $(".agent-state", row).textContent = r.state ?? d.state ?? String(r.status ?? "—");
      if ("last_run" in d || d.run) $(".agent-last", row).textContent = agentRun(d.last_run || d.run);
      if ("next_tick" in d) $(".agent-next", row).textContent = d.next_tick ? when(d.next_tick) : "not scheduled";
      if ("findings_24h" in d) $(".agent-findings", row).textContent = String(d.findings_24h);
    };
    row.addEventListener("click", async (e) => {
      const b = e.target.closest("button[data-verb]"); if (!b) return;
      try {
        const r = b.dataset.verb === "status" ? await api(`/${agent}/status`) : await api(`/${agent}/${b.dataset.verb}`, { method: "POST" });
        show(r); if (b.dataset.verb !== "status") say(`${agent}: ${b.dataset.verb} → ${r.state ?? r.status}`, "ok");
      } catch (err) { $(".agent-state", row).textContent = err.message; }
    });
    api(`/${agent}/status`, { quiet: true }).then(show).catch((err) => {
      $(".agent-state", row).textContent = err.status === 503 ? "not running" : err.message;
      $(".agent-state", row).title = err.message;
    });
  }
  $("#drain").addEventListener("click", async () => {
    try {
      const r = await api("/critic/quarantine/drain", { method: "POST" });
      const said = Object.entries(r || {}).filter(([, v]) => typeof v !== "object").map(([k, v]) => `${k.replace(/_/g, " ")}: ${v}`);
      $("#drain-result").textContent = said.length ? said.join(" · ") : "Drained.";
    } catch { /* alert */ }
  });
  api("/audit?action=consumer.dead_letter&limit=100", { quiet: true }).then((rows) => {
    const tb = $("#dead-letters");
    for (const r of rows) tb.append(el("tr", {}, el("td", { text: when(r.occurred_at) }), el("td", { text: r.service }), el("td", {}, el("code", { text: r.payload.subject ?? "" })), el("td", { text: r.payload.reason ?? "" })));
    if (!rows.length) tb.append(el("tr", {}, el("td", { colspan: "4", text: "No dead letters." })));
  }).catch((e) => $("#dead-letters").append(el("tr", {}, el("td", { colspan: "4", text: e.message }))));
};

/* ---- My work: every question and report this key asked, newest first --------------------------- */
/* Where an item of My work opens: a question's task page, a report's run page (its trace and result). */
function workHref(item) {
  if (item.kind === "question") return `/task/${item.id}`;
  if (item.kind === "source_list" && item.status !== "running") return `/sources/${item.id}`;
  return item.run_id ? `/run/${encodeURIComponent(item.run_id)}?kind=${item.kind}&id=${item.id}` : `/report/${item.id}`;
}
pages.work = () => {
  const tbody = $("#work");
  const more = $("#work-more");
  let limit = PAGE_SIZE;
  let asking = 0;
  const load = async () => {
    const q = new URLSearchParams({ limit: String(limit) });
    if ($("#w-q").value.trim()) q.set("q", $("#w-q").value.trim());
    if ($("#w-kind").value) q.set("kind", $("#w-kind").value);
    const asked = ++asking;  // a slower earlier answer never replaces a later one
    let rows = [];
    try { rows = await api(`/my-work?${q}`); } catch { return; }
    if (asked !== asking) return;
    tbody.innerHTML = "";
    for (const w of rows) {
      tbody.append(el("tr", { "data-work-id": w.id, "data-kind": w.kind },
        el("td", {}, el("a", { href: workHref(w), text: w.title })),
        el("td", { text: KIND_LABELS[w.kind] || "Question" }),
        el("td", {}, el("span", { class: `badge status-${w.status}`, text: w.status })),
        el("td", { text: when(w.created_at) }),
        el("td", {}, w.kind !== "question" && w.run_id ? el("a", { href: `/run/${encodeURIComponent(w.run_id)}?kind=${w.kind}&id=${w.id}`, "aria-label": `trace of ${w.title}`, text: "trace" }) : "—")));
    }
    if (!rows.length) tbody.append(el("tr", {}, el("td", { colspan: "5", text: $("#w-q").value.trim() || $("#w-kind").value ? "Nothing you asked matches." : "Nothing asked yet: start on the Ask page." })));
    more.hidden = rows.length < limit;
  };
  $("#work-filter").addEventListener("submit", (e) => { e.preventDefault(); limit = PAGE_SIZE; load(); });
  more.addEventListener("click", () => { limit += PAGE_SIZE; load(); });
  load();
};

/* ---- A paper's card -------------------------------------------------------------------------- */
/* The abstract with every quoted sentence marked (<mark>), matched as written. */
function highlighted(text, quotes) {
  const box = el("p", { class: "abstract" });
  const spans = [];
  for (const q of quotes) {
    const needle = String(q).trim().replace(/^"|"$/g, "");
    const at = needle ? text.indexOf(needle) : -1;
    if (at >= 0) spans.push([at, at + needle.length]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  let pos = 0;
  for (const [start, end] of spans) {
    if (start < pos) continue;
    box.append(text.slice(pos, start), el("mark", { text: text.slice(start, end) }));
    pos = end;
  }
  box.append(text.slice(pos));
  return box;
}
const paperHref = (paperId) => `/paper/${encodeURIComponent(paperId)}`;
pages.paper = async () => {
  const id = body.dataset.paperId;
  const root = $("#paper");
  let p;
  try { p = await api(`/papers/${encodeURIComponent(id)}`); } catch { root.textContent = "Paper not available."; return; }
  titlePage(p.title, "");
  $("#page-kind").textContent = p.in_corpus ? "Corpus paper" : "Outside source";
  root.innerHTML = "";
  root.append(el("p", { class: "meta paper-meta", text: [p.authors.join(", "), p.year, p.venue].filter(Boolean).join(" · ") || "No authors, year or venue known." }));
  if (p.study) root.append(el("p", { class: "study", text: `Study: ${p.study} (as the abstract states it).` }));
  const facts = el("dl", { class: "config" });
  if (p.doi) facts.append(el("dt", { text: "DOI" }), el("dd", { text: p.doi }));
  facts.append(el("dt", { text: "Source" }), el("dd", { text: p.in_corpus ? "the local corpus" : "an outside search; what its source gave is shown" }));
  root.append(facts);
  if (p.links.length) {
    const links = el("p", { class: "toolbar paper-links" });
    for (const l of p.links) links.append(el("a", { class: "button", href: outsideUrl(l.href), rel: "noopener", target: "_blank", text: `${l.label} ↗` }));
    root.append(links);
  }
  root.append(el("h2", { text: p.in_corpus ? "Abstract" : "Text the source gave" }));
  root.append(p.abstract ? highlighted(p.abstract, p.quotes) : el("p", { class: "note", text: "No abstract known." }));
  if (p.quotes.length) root.append(el("p", { class: "note", text: `Marked: ${plural(p.quotes.length, "sentence")} a report quotes.` }));
  root.append(el("h2", { text: `Cited by (${p.cited_by.length})` }));
  const ul = el("ul", { class: "plain cited-by" });
  for (const c of p.cited_by) {
    const quoted = c.quotes.length ? el("details", {}, el("summary", { text: plural(c.quotes.length, "quote") }), ...c.quotes.map((q) => el("blockquote", { text: q }))) : null;
    ul.append(el("li", {}, el("span", { class: "badge", text: KIND_LABELS[c.kind] || c.kind }), " ",
      el("a", { href: c.kind === "source_list" ? `/sources/${c.report_id}` : `/report/${c.report_id}#ref-${c.reference_id}`, text: c.subject }),
      ` · reference [${c.reference_id}] · ${when(c.updated_at)}`, quoted));
  }
  if (!p.cited_by.length) ul.append(el("li", { class: "note", text: "No report cites this paper yet." }));
  root.append(ul);
};

/* ---- The audit log (admins) ------------------------------------------------------------------ */
pages.audit = () => {
  const tbody = $("#audit");
  const more = $("#audit-more");
  let limit = PAGE_SIZE;
  let asking = 0;
  const iso = (value) => (value ? new Date(value).toISOString() : "");
  const load = async () => {
    if (body.dataset.role !== "admin") { tbody.innerHTML = ""; tbody.append(el("tr", {}, el("td", { colspan: "6", text: "The audit log is shown to admin keys." }))); return; }
    const q = new URLSearchParams({ limit: String(limit) });
    for (const [k, field] of [["action", "#a-action"], ["key_id", "#a-key"]]) if ($(field).value.trim()) q.set(k, $(field).value.trim());
    if ($("#a-since").value) q.set("since", iso($("#a-since").value));
    if ($("#a-until").value) q.set("until", iso($("#a-until").value));
    const asked = ++asking;  // a slower earlier answer never replaces a later one
    let rows = [];
    try { rows = await api(`/audit?${q}`); } catch { return; }
    if (asked !== asking) return;
    tbody.innerHTML = "";
    for (const r of rows) {
      const ids = r.subject_ids || {};
      const about = [r.task_id && el("a", { href: `/task/${r.task_id}`, text: `task ${String(r.task_id).slice(0, 8)}` }),
        r.claim_id && el("a", { href: `/claim/${r.claim_id}`, text: `claim ${String(r.claim_id).slice(0, 8)}` }),
        ids.report_id && el("a", { href: `/report/${ids.report_id}`, text: `report ${String(ids.report_id).slice(0, 8)}` })].filter(Boolean);
      const cell = el("td"); for (const a of about) cell.append(a, " ");
      tbody.append(el("tr", { "data-action": r.action }, el("td", { text: when(r.occurred_at) }), el("td", {}, el("code", { text: r.action })), el("td", { text: r.service }),
        el("td", {}, ids.key_id ? el("code", { title: ids.key_id, text: String(ids.key_id).slice(0, 8) }) : "—"), about.length ? cell : el("td", { text: "—" }),
        el("td", {}, Object.keys(r.payload || {}).length ? el("details", {}, el("summary", { text: "details" }), facts(r.payload)) : "—")));
    }
    if (!rows.length) tbody.append(el("tr", {}, el("td", { colspan: "6", text: "No events match." })));
    more.hidden = rows.length < limit;
  };
  $("#audit-filter").addEventListener("submit", (e) => { e.preventDefault(); limit = PAGE_SIZE; load(); });
  more.addEventListener("click", () => { limit += PAGE_SIZE; load(); });
  load();
};

document.addEventListener("DOMContentLoaded", () => { const run = pages[body.dataset.page]; if (run) run(); });
