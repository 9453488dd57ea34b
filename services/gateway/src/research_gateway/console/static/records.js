/* research-engine console: the record lists (reviews, watched claims, schedules) and the diffs a
   re-run or a refresh stored, filled from the JSON API with the helpers of console.js. */
"use strict";

/* ---- Diffs ----------------------------------------------------------------------------------- */
function changeList(label, items, line) {
  if (!items || !items.length) return null;
  const ul = el("ul");
  for (const item of items) ul.append(el("li", { text: line(item) }));
  return el("div", { class: "change" }, el("h4", { text: `${label} (${items.length})` }), ul);
}

/* A source-list run's diff against the run before (`SourceListDiff`); null = not kept (retention). */
function sourceListDiff(diff) {
  if (!diff) return el("p", { class: "note", text: "Diff not kept (older than the retention window)." });
  const counts = [["new", "added"], ["changed", "changed"], ["dropped", "dropped"]].map(([k, w]) => `${(diff[k] || []).length} ${w}`).join(", ");
  const first = !diff.previous_run_id;
  const box = el("details", { class: "diff" }, el("summary", { text: first ? `First snapshot: ${counts}` : `Changes: ${counts}` }));
  const fields = (c) => `${c.title}${c.fields && c.fields.length ? " (" + c.fields.join(", ") + ")" : ""}`;
  const parts = [changeList("Added", diff.new, fields), changeList("Changed", diff.changed, fields), changeList("Dropped", diff.dropped, fields)].filter(Boolean);
  box.append(...(parts.length ? parts : [el("p", { text: "No changes." })]));
  return box;
}

/* A review refresh's diff (`research_reports.ReportDiff`). */
function reportDiff(diff) {
  if (!diff) return el("p", { class: "note", text: "First version: nothing to compare with." });
  const finding = (f) => `[${f.tag || "-"}] ${f.statement}`;
  const reference = (r) => `${r.title}${r.year ? " (" + r.year + ")" : ""}`;
  const parts = [
    changeList("Findings added", diff.findings_added, finding),
    changeList("Findings removed", diff.findings_removed, finding),
    changeList("Findings re-tagged", diff.findings_retagged, (c) => `${c.statement}: ${c.old_tag || "-"} → ${c.new_tag || "-"}`),
    changeList("References added", diff.references_added, reference),
    changeList("References dropped", diff.references_dropped, reference),
  ].filter(Boolean);
  return el("div", { class: "diff" }, el("p", { text: `Changes from version ${diff.old_version} to ${diff.new_version}:` }),
    ...(parts.length ? parts : [el("p", { text: "No changes." })]));
}

const badge = (text, kind = text) => el("span", { class: `badge status-${kind} verdict-${String(kind).toLowerCase().replace(/[^a-z]+/g, "-")}`, text });

/* ---- Reviews: stale ones flagged, each version's diff on demand ------------------------------ */
pages.reviews = () => {
  const ul = $("#reviews");
  const versions = async (reviewId, box) => {
    box.innerHTML = "";
    try {
      const rows = await api(`/reviews/${reviewId}/versions`);
      const ol = el("ol", { class: "versions" });
      for (const v of rows) {
        const tags = Object.entries(v.tags || {}).map(([t, n]) => `${t} ${n}`).join(", ");
        ol.append(el("li", {}, el("strong", { text: `Version ${v.version}` }), ` · ${when(v.created_at)} · verdict ${v.verdict || "—"}${tags ? " · " + tags : ""} `,
          el("a", { href: `${API}/reviews/${reviewId}/export?format=md&version=${v.version}`, download: true, text: "Markdown" }), reportDiff(v.diff)));
      }
      box.append(rows.length ? ol : el("p", { class: "note", text: "No version yet." }));
    } catch { box.append(el("p", { class: "note", text: "Versions unavailable." })); }
  };
  const load = async () => {
    ul.innerHTML = "";
    const q = new URLSearchParams({ limit: "200" });
    if ($("#r-status").value) q.set("status", $("#r-status").value);
    let rows = [];
    try { rows = await api(`/reviews?${q}`); } catch { return; }
    const canRefresh = body.dataset.role !== "reader";
    for (const r of rows) {
      const box = el("div", { class: "versions-box" });
      const more = el("details", {}, el("summary", { text: "Versions and changes" }), box);
      more.addEventListener("toggle", () => { if (more.open && !box.childElementCount) versions(r.review_id, box); });
      const refresh = el("button", { type: "button", disabled: !canRefresh || r.status === "running", text: "Refresh" });
      refresh.addEventListener("click", async () => {
        try { const a = await api(`/reviews/${r.review_id}/refresh`, { method: "POST" }); location.href = `/run/${a.run_id}?kind=review&id=${a.review_id}`; } catch { /* alert */ }
      });
      ul.append(el("li", { class: `card record ${r.status}`, "data-review-id": r.review_id },
        el("h2", {}, el("a", { href: `/report/${r.review_id}`, text: r.topic })),
        el("p", {}, badge(r.status), ` version ${r.version} · updated ${when(r.updated_at)}`),
        r.stale_reason ? el("p", { class: "warn", text: `Stale: ${r.stale_reason}` }) : null,
        r.error ? el("p", { class: "error", text: `Failed: ${r.error}` }) : null,
        el("div", { class: "toolbar" }, refresh), more));
    }
    if (!rows.length) ul.append(el("li", { class: "note", text: "No reviews." }));
  };
  $("#reviews-filter").addEventListener("submit", (e) => { e.preventDefault(); load(); });
  load();
};

/* ---- Watched claims and their verdict history ----------------------------------------------- */
pages.watched = async () => {
  const tbody = $("#watched");
  let rows = [];
  try { rows = await api("/watched-claims?limit=500"); } catch { return; }
  for (const w of rows) {
    const history = el("ol", { class: "history" });
    for (const h of w.history) history.append(el("li", {}, badge(h.verdict), ` ${h.confidence} · ${when(h.recorded_at)}`));
    const latest = w.history[w.history.length - 1];
    tbody.append(el("tr", { "data-verification-id": w.verification_id },
      el("td", {}, el("a", { href: `/report/${w.verification_id}`, text: w.claim })),
      el("td", {}, latest ? badge(latest.verdict) : el("span", { class: "note", text: "not verified yet" }), w.reverifying ? " · re-verifying" : ""),
      el("td", {}, w.history.length ? history : el("span", { class: "note", text: "—" })),
      el("td", { text: `${w.interval_days} days` }),
      el("td", { text: when(w.next_due_at) })));
  }
  if (!rows.length) tbody.append(el("tr", {}, el("td", { colspan: "5", text: "No watched claims: verify a claim with “Watch” on." })));
};

/* ---- Scheduled source lists ------------------------------------------------------------------ */
pages.schedules = () => {
  const tbody = $("#schedules");
  const canAdmin = body.dataset.role === "admin";
  const load = async () => {
    let rows = [];
    try { rows = (await api("/source-lists?limit=500")).filter((r) => r.schedule); } catch { return; }
    tbody.innerHTML = "";
    for (const r of rows) {
      const s = r.schedule;
      const actions = el("div", { class: "toolbar" });
      for (const verb of ["pause", "resume", "cancel"]) {
        const off = !canAdmin || s.status === "cancelled" || (verb === "pause" && s.status === "paused") || (verb === "resume" && s.status === "active");
        const b = el("button", { type: "button", class: verb === "cancel" ? "danger" : null, "data-schedule": verb, disabled: off, "aria-label": `${verb} the schedule of ${r.prompt}`, text: verb[0].toUpperCase() + verb.slice(1) });
        b.addEventListener("click", async () => {
          try { const c = await api(`/source-lists/${r.source_list_id}/schedule`, { method: "PATCH", json: { action: verb } }); say(`Schedule ${c.schedule.status}.`, "ok"); await load(); } catch { /* alert */ }
        });
        actions.append(b);
      }
      tbody.append(el("tr", { "data-source-list-id": r.source_list_id },
        el("td", {}, el("a", { href: `/sources/${r.source_list_id}`, text: r.prompt || r.source_list_id }), " ",
          el("code", { class: "note", title: r.source_list_id, text: r.source_list_id.slice(0, 8) })),
        el("td", {}, badge(s.status)), el("td", { text: s.update_frequency }),
        el("td", { text: s.status === "active" ? when(s.next_run_at) : "—" }), el("td", { text: when(s.last_run_at) }), el("td", {}, actions)));
    }
    if (!rows.length) tbody.append(el("tr", {}, el("td", { colspan: "6", text: "No scheduled source lists." })));
  };
  load();
};
