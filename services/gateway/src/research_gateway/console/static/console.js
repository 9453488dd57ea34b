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
/* A link target for an outside address (a source's URL from third-party metadata): http and https
   only; anything else (javascript:, data:, vbscript:, a relative path) is no link at all. */
function outsideUrl(value) {
  try {
    const url = new URL(String(value ?? ""));
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch { return null; }
}
function say(message, kind = "error") {
  const box = $("#alert");
  box.hidden = false; box.className = "alert " + kind; box.textContent = message;
}
class ApiError extends Error { constructor(status, detail) { super(detail); this.status = status; } }

/* The Ask form's and the API's field names, as a person reads them in an error. */
const FIELD_LABELS = {
  question: "Question", topic: "Review topic", claim: "Claim to verify", prompt: "What the sources should cover",
  entity: "Entity", max_iterations: "Peer-review rounds", num_references: "Number of references", keywords: "Keywords",
  workspace: "Workspace", source_type: "Source type", detail_level: "Detail level", date_from: "From date", date_to: "To date",
  update_frequency: "Schedule", watch: "Watch",
};
const fieldLabel = (name) => FIELD_LABELS[name] || String(name).replace(/_/g, " ");
const plural = (n, one, many = one + "s") => `${n} ${n === 1 ? one : many}`;
/* One validation problem (FastAPI's 422 item: loc, type, msg) in words naming the field and the limit.
   The gateway's 422 names the rule, never the value (no `input`, no `ctx`): the limit is the number in its
   message, and the length is that of what this page sent. */
function problemText(d, sent = {}) {
  const names = (d.loc || []).filter((part) => typeof part === "string" && part !== "body");
  const field = names[names.length - 1];
  const label = names.length ? fieldLabel(field) : "The request";
  const number = (String(d.msg || "").match(/-?\d+(?:\.\d+)?/) || [])[0];
  const limit = (key) => (d.ctx || {})[key] ?? (number === undefined ? undefined : Number(number));
  const ctx = { max_length: limit("max_length"), min_length: limit("min_length"), le: limit("le"), lt: limit("lt"), ge: limit("ge"), gt: limit("gt"), expected: (d.ctx || {}).expected };
  const value = d.input !== undefined ? d.input : sent && typeof sent === "object" ? sent[field] : undefined;
  const length = typeof value === "string" || Array.isArray(value) ? value.length : null;
  switch (d.type) {
    case "missing": return `${label} is required.`;
    case "string_too_long": return `${label}: at most ${plural(ctx.max_length, "character")}${length != null ? ` (this one has ${length})` : ""}.`;
    case "string_too_short": return `${label}: at least ${plural(ctx.min_length, "character")}${length != null ? ` (this one has ${length})` : ""}.`;
    case "too_long": return `${label}: at most ${plural(ctx.max_length, "item")}${length != null ? ` (this one has ${length})` : ""}.`;
    case "too_short": return `${label}: at least ${plural(ctx.min_length, "item")}.`;
    case "less_than_equal": return `${label}: at most ${ctx.le}.`;
    case "less_than": return `${label}: less than ${ctx.lt}.`;
    case "greater_than_equal": return `${label}: at least ${ctx.ge}.`;
    case "greater_than": return `${label}: more than ${ctx.gt}.`;
    case "int_parsing": case "int_type": return `${label}: a whole number, please.`;
    case "string_pattern_mismatch": return `${label}: needs words (letters), not only spaces, digits or symbols.`;
    case "enum": case "literal_error": return `${label}: one of ${ctx.expected || "the listed values"}.`;
  }
  return `${label}: ${String(d.msg || "not accepted").replace(/^Value error, /, "")}.`.replace(/\.\.$/, ".");
}
/* An error answer in plain words: never a raw object, never a bare status code in front. */
function errorText(status, detail, text, sent) {
  let words;
  if (Array.isArray(detail)) words = detail.map((d) => (d && typeof d === "object" ? problemText(d, sent) : String(d))).join(" ");
  else if (detail && typeof detail === "object") {
    words = detail.error || detail.message || detail.reason || detail.detail;
    if (typeof words !== "string") words = Object.entries(detail).map(([k, v]) => `${k.replace(/_/g, " ")}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join("; ");
  } else words = detail != null && detail !== "" ? String(detail) : "";
  if (!words || /^\s*</.test(words)) words = text && !/^\s*</.test(text) ? String(text).slice(0, 300) : `the server answered with status ${status}`;
  if (status === 403) return `Forbidden (403): ${words}`;
  if (status === 401) return `Not signed in (401): ${words}`;
  if (status === 429) return `Too many requests: ${words}`;
  if (status >= 500) return `The server could not answer (${status}): ${words}`;
  return words.charAt(0).toUpperCase() + words.slice(1);
}

async function api(path, { method = "GET", json, quiet = false } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (json !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(json); }
  const resp = await fetch(API + path, init);
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!resp.ok) {
    const why = errorText(resp.status, data && typeof data === "object" && "detail" in data ? data.detail : data, text, json);
    if (!quiet) say(why);
    throw new ApiError(resp.status, why);
  }
  return data;
}

/* The API's own request schemas (its OpenAPI document), read once per tab: the form's limits come from them. */
async function requestSchemas() {
  let doc = sessionStorage.getItem("openapi-schemas");
  if (!doc) {
    try { const resp = await fetch("/openapi.json", { credentials: "same-origin" }); doc = JSON.stringify(((await resp.json()).components || {}).schemas || {}); }
    catch { return {}; }
    try { sessionStorage.setItem("openapi-schemas", doc); } catch { /* full: read it again next time */ }
  }
  return JSON.parse(doc);
}
/* A property's limits (maxLength, minLength, maximum, minimum), looking through `anyOf` (an optional field). */
function limitsOf(schemas, model, field) {
  const prop = ((schemas[model] || {}).properties || {})[field] || {};
  const found = {};
  for (const part of [prop, ...(prop.anyOf || [])]) for (const k of ["maxLength", "minLength", "maximum", "minimum", "maxItems"]) if (part[k] !== undefined && found[k] === undefined) found[k] = part[k];
  return found;
}
const when = (iso) => (iso ? new Date(iso).toLocaleString() : "—");

/* ---- Markdown (the report's own subset: headings, lists, quotes, bold, code, [N]) ---------- */
function inline(text) {
  let html = esc(text);
  html = html.replace(/`([^`]+)`/g, "<code>$1</code>");
  html = html.replace(/\*\*\[([A-Z_ ]+)\]\*\*/g, (m, tag) => `<span class="badge tag-${tag.toLowerCase().replace(/ /g, "-")}">${tag}</span>`);
  html = html.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
  html = html.replace(/(^|[\s(])\*([^*\s][^*]*)\*(?=[\s.,;:)]|$)/g, "$1<em>$2</em>");  // a reference's *venue*
  html = html.replace(/\[(\d+)\](?!\()/g, '<a class="cite" href="#ref-$1" aria-label="reference $1">[$1]</a>');
  html = html.replace(/\[([^\]]+)\]\((https?:[^)]+)\)/g, '<a href="$2" rel="noopener">$1</a>');
  return html;
}
/* A sentence reduced to its words (no markers, case or punctuation): a quote equal to its finding is shown once. */
const bare = (text) => String(text).replace(/\[\d+(?:,\s*\d+)*\]/g, " ").replace(/\*\*\[[A-Z_ ]+\]\*\*/g, " ").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
/* Whether a quote says what its finding says, word for word (one holds the other, and most of it). */
function repeats(quote, finding) {
  const [a, b] = [bare(quote), bare(finding)].sort((x, y) => x.length - y.length);
  return Boolean(a) && b.includes(a) && a.length >= 0.6 * b.length;
}
/* A "Closest Evidence (not counted)" group: "Statement N: … — leans X, P 0.41, bar 0.60: why". */
const NOT_COUNTED_GROUP = /^(Statement \d+: .*) — leans (\S+), P ([\d.]+), bar ([\d.]+): (.*)$/;
function renderMarkdown(md) {
  const out = [];
  let list = 0;
  let item = "";  // the list item a quote line belongs to
  const close = () => { while (list > 0) { out.push("</li></ul>"); list--; } };
  for (const raw of String(md || "").split("\n")) {
    const line = raw.replace(/\s+$/, "");
    let m;
    if (!line.trim()) { close(); continue; }
    if ((m = line.match(/^(#{1,4}) (.*)$/))) {
      close(); const n = Math.min(m[1].length + 1, 6);
      const near = m[2].match(NOT_COUNTED_GROUP);
      if (near) {
        out.push(`<h${n}>${inline(near[1])}</h${n}>`, `<p class="not-counted">Leans ${esc(near[2])} with probability ${esc(near[3])}, under the bar of ${esc(near[4])}: ${inline(near[5])}</p>`);
      } else out.push(`<h${n}>${inline(m[2])}</h${n}>`);
      continue;
    }
    if ((m = line.match(/^(\s*)- > (.*)$/))) {
      const quote = m[2].replace(/^"(.*)"(\s*\[\d+\])?$/, "$1");
      const cited = (m[2].match(/\[(\d+)\]\s*$/) || [])[1];
      if (repeats(quote, item)) {  // the finding is the quote: say so, don't repeat it
        out.push(` <span class="verbatim note">(the source's own words${cited ? ` <a class="cite" href="#ref-${cited}">[${cited}]</a>` : ""})</span>`);
      } else out.push(`<details class="quote"><summary>Exact quote</summary><blockquote>${inline(m[2])}</blockquote></details>`);
      continue;
    }
    if ((m = line.match(/^(\s*)- (.*)$/))) {
      const depth = Math.floor(m[1].length / 2) + 1;
      if (depth > list) { while (list < depth) { out.push("<ul><li>"); list++; } }
      else { while (list > depth) { out.push("</li></ul>"); list--; } out.push("</li><li>"); }
      item = m[2]; out.push(inline(m[2])); continue;
    }
    if ((m = line.match(/^> ?(.*)$/))) { close(); out.push(`<blockquote>${inline(m[1])}</blockquote>`); continue; }
    if ((m = line.match(/^\[(\d+)\] (.*)$/))) { close(); out.push(`<p class="ref" id="ref-${m[1]}">[${m[1]}] ${inline(m[2]).replace(/<a class="cite"[^>]*>\[\d+\]<\/a>/g, "")}</p>`); continue; }
    close(); out.push(`<p>${inline(line)}</p>`);
  }
  close();
  return out.join("\n");
}

/* ---- Model usage (research_llm.usage: calls, tokens in / out, cost, seconds, fallbacks) ------ */
function usageText(u) {
  const n = (x) => Number(x || 0).toLocaleString("en");
  const parts = [`${n(u.calls)} model call${u.calls === 1 ? "" : "s"}`, `${n(u.tokens_in)} tokens in / ${n(u.tokens_out)} out`,
    `$${Number(u.cost_usd || 0).toFixed(4)}`, `${Number(u.seconds || 0).toFixed(1)} s`];
  const models = Object.keys(u.models || {});
  if (models.length) parts.push(models.join(", "));
  return `Model usage: ${parts.join(" · ")}`;
}
/* A usage line, the spent budget and every answer the offline engine gave instead (with why); null = no model asked. */
function usageView(u, tag = "div") {
  if (!u || (!u.calls && !(u.fallbacks || []).length)) return null;
  const box = el(tag, { class: "usage", "data-usage": "" }, el("p", { class: "usage-line", text: usageText(u) }));
  if (u.budget_spent) box.append(el("p", { class: "warn", text: `Budget: ${u.budget_spent}; the rest of the run was answered offline.` }));
  const fell = u.fallbacks || [];
  if (fell.length) {
    const ul = el("ul", { class: "fallbacks" });
    for (const f of fell) ul.append(el("li", { text: `${f.question}: offline engine — ${(f.reasons || []).join("; ")}` }));
    box.append(el("details", {}, el("summary", { text: `${fell.length} answer${fell.length === 1 ? "" : "s"} from the offline engine instead of the model` }), ul));
  }
  return box;
}

/* ---- Report view (review / verification / source-list report) ----------------------------- */
function renderReport(view, target) {
  target.innerHTML = "";
  const head = el("div", { class: "report-head" },
    el("p", {}, el("span", { class: `badge status-${view.status}`, text: view.status }), " ",
      `${view.kind} · version ${view.version ?? view.current_version} · updated ${when(view.updated_at)}`));
  if (view.stale_reason) head.append(el("p", { class: "warn", role: "note", text: `Stale: ${view.stale_reason}` }));
  const content = view.content || {};
  const meta = content.metadata || (content.report || {}).metadata || {};
  const used = usageView(meta.llm_usage);
  if (used) head.append(used);
  const article = el("article", { class: "markdown", html: renderMarkdown(view.markdown) });
  target.append(head, coverageView(view), article);
  linkPapers(article, (content.report || content).references || []);
  studyNotes(article, view.studies);
  if (view.kind === "verification") { const judged = judgeView(meta); if (judged) head.append(judged); }
  const check = view.citation_check || {};
  if (Object.keys(check).length) target.append(citationCheckView(check));
  const review = view.review || {};
  if (Object.keys(review).length) target.append(view.kind === "review" ? peerReviewView(review) : assessmentView(review));
  if (view.diff) target.append(el("details", { class: "panel" }, el("summary", { text: "Changes since the previous version" }), facts(view.diff)));
  const dl = el("p", { class: "downloads" }, "Download: ");
  for (const [fmt, label] of [["markdown", "Markdown"], ["pdf", "PDF"], ["bibtex", "BibTeX"], ["ris", "RIS"]]) {
    dl.append(el("a", { class: "button", href: `${API}/reports/${view.report_id}/export?format=${fmt}`, download: true, text: label }), " ");
  }
  target.append(dl);
  if (view.kind === "review") {
    const refresh = el("button", { type: "button", disabled: body.dataset.role === "reader", text: "Refresh this review" });
    refresh.addEventListener("click", async () => {
      try { const r = await api(`/reviews/${view.report_id}/refresh`, { method: "POST" }); location.href = `/run/${r.run_id}?kind=review&id=${r.review_id}`; } catch { /* alert */ }
    });
    target.append(el("p", {}, refresh));
  }
  if (view.kind === "source_list") target.append(el("p", {}, el("a", { href: `/sources/${view.report_id}`, text: "Open as source-list cards" })));
}

/* ---- Coverage: what was asked and found, from the report's own metadata ------------------------ */
const SOURCE_NAMES = { corpus: "the local corpus", pubmed: "PubMed", arxiv: "arXiv", europepmc: "Europe PMC", openalex: "OpenAlex", crossref: "Crossref", semantic_scholar: "Semantic Scholar" };
const sourceName = (s) => SOURCE_NAMES[String(s).toLowerCase()] || String(s);
/* A banner on top of every result: sources asked for and found, outside sources searched and those
   unreachable, papers from the local corpus, and when nothing was found why, with the closest miss. */
function coverageView(view) {
  const content = view.content || {};
  const report = content.report && typeof content.report === "object" ? content.report : content;
  const meta = report.metadata || {};
  const refs = report.references || [];
  const box = el("section", { class: "coverage", "aria-label": "Coverage" });
  const lines = [];
  if (view.kind === "source_list") {
    const found = ((content.source_list || {}).sources || refs).length;
    const asked = (view.request || {}).num_references;
    lines.push(asked ? `${found} of ${plural(asked, "source")} asked for found.` : `${plural(found, "source")} found.`);
  } else lines.push(`${plural(refs.length, "source")} cited.`);
  const corpus = refs.filter((r) => String(r.paper_id || "").startsWith("corpus:")).length;
  lines.push(`${plural(corpus, "paper")} from the local corpus${refs.length > corpus ? `, ${refs.length - corpus} from outside sources` : ""}.`);
  const searched = [].concat(meta.sources || []).filter((s) => typeof s === "string");
  if (searched.length) lines.push(`Searched: ${searched.map(sourceName).join(", ")}.`);
  box.append(el("p", { class: "coverage-line", text: lines.join(" ") }));
  const down = Object.entries(meta.sources_down || {});
  if (down.length) box.append(el("p", { class: "warn coverage-down", text: `Unreachable: ${down.map(([s, why]) => `${sourceName(s)} (${why})`).join("; ")}. Nothing from ${down.length === 1 ? "it" : "them"} is in this result.` }));
  const empty = meta.empty_reason || meta.nothing_found;
  if (empty || !refs.length) {
    box.append(el("p", { class: "warn coverage-empty", text: empty ? `Nothing found: ${String(empty).replace(/^[-\s]+/, "")}` : "Nothing found: no source answered on topic." }));
    const near = (report.sections || []).find((s) => /closest evidence/i.test(s.title || ""));
    const miss = near && (near.findings || [])[0];
    const ref = miss && refs.find((r) => (miss.citations || []).includes(r.id));
    if (miss) box.append(el("p", { class: "coverage-miss" }, "Closest miss: ", ref && ref.paper_id ? el("a", { href: `/paper/${encodeURIComponent(ref.paper_id)}`, text: ref.title }) : (ref ? ref.title : ""), ` — ${miss.statement}`));
  }
  return box;
}
/* Each reference line's "paper id: corpus:…" becomes a link to the paper's page. */
function linkPapers(article, refs) {
  for (const line of article.querySelectorAll("p.ref")) {
    const ref = refs.find((r) => `ref-${r.id}` === line.id);
    if (!ref || !ref.paper_id) continue;
    const code = [...line.querySelectorAll("code")].find((c) => c.textContent === ref.paper_id);
    const link = el("a", { class: "paper-link", href: `/paper/${encodeURIComponent(ref.paper_id)}`, "aria-label": `paper page of ${ref.title}`, text: "Paper page" });
    if (code) {
      const before = code.previousSibling;
      if (before && before.nodeType === 3) before.textContent = before.textContent.replace(/paper id:\s*$/, "");
      code.replaceWith(link);
    } else line.append(" ", link);
  }
}

/* Per finding, the design and size of each paper it cites, as the paper's abstract states them
   (`studies`: reference id → "randomised trial, 19,114 adults"); each reference line too. */
function studyNotes(article, studies) {
  if (!studies || !Object.keys(studies).length) return;
  for (const li of article.querySelectorAll("li")) {
    const cited = [...new Set([...li.querySelectorAll(":scope > a.cite")].map((a) => a.getAttribute("href").replace("#ref-", "")))];
    const said = cited.filter((n) => studies[n]).map((n) => `[${n}] ${studies[n]}`);
    if (said.length) li.insertBefore(el("span", { class: "study note", text: ` Study: ${said.join("; ")}.` }), li.querySelector(":scope > ul, :scope > details"));
  }
  for (const line of article.querySelectorAll("p.ref")) {
    const study = studies[line.id.replace("ref-", "")];
    if (study) line.append(el("span", { class: "study note", text: ` · ${study}` }));
  }
}

/* ---- Evidence in words: the citation check, the peer review, the verification's judge ---------- */
const words = (key) => { const w = String(key).replace(/_/g, " "); return w.charAt(0).toUpperCase() + w.slice(1); };
const pct = (x) => `${Math.round(100 * Number(x))}%`;
/* Any stored object as a definition list: nested objects nest, lists of words join; never a JSON dump. */
function facts(obj, skip = []) {
  if (obj === null || typeof obj !== "object") return el("span", { class: "prose", text: String(obj ?? "—") });
  if (Array.isArray(obj)) {
    if (obj.every((v) => v === null || typeof v !== "object")) return el("span", { text: obj.length ? obj.join(", ") : "none" });
    const ol = el("ol", { class: "facts-list" }); for (const v of obj) ol.append(el("li", {}, facts(v))); return ol;
  }
  const dl = el("dl", { class: "config facts" });
  for (const [k, v] of Object.entries(obj)) {
    if (skip.includes(k) || v === null || v === undefined || v === "") continue;
    dl.append(el("dt", { text: words(k) }), el("dd", {}, facts(v)));
  }
  return dl;
}
function table(head, rows) {
  const t = el("table", { class: "table" }, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col", text: h })))));
  const tb = el("tbody"); for (const r of rows) tb.append(el("tr", {}, ...r.map((c) => el("td", {}, c instanceof Node ? c : String(c ?? ""))))); t.append(tb);
  return t;
}
const ISSUE_REASONS = {
  unknown_id: "the marker names no reference", low_overlap: "the cited source shares too few of the sentence's words",
  number_not_in_source: "a number of the sentence is in none of its cited sources", quote_not_verbatim: "the quote is not found word for word in the source",
  no_source_text: "the source's text is unknown, so nothing could be checked", uncited_fact: "a factual sentence without a citation",
};
function citationCheckView(check) {
  const known = ["quotes", "citations", "factual_sentences"].some((k) => k in check);
  const problems = (check.issues || []).length;
  const ok = check.ok === false || check.blocking ? false : problems === 0;
  const box = el("details", { class: "panel citation-check", open: true },
    el("summary", { text: `Citation check: ${ok ? "all citations verified" : check.blocking ? "a citation names no reference" : `${plural(problems, "problem")} found`}` }));
  if (!known) { box.append(facts(check)); return box; }
  const lines = [];
  if (check.quotes) lines.push(`${check.verbatim_quotes} of ${plural(check.quotes, "quote")} found verbatim in the cited source.`);
  if (check.citations) lines.push(`${check.supported_citations} of ${plural(check.citations, "citation")} supported by the source ${check.citations === 1 ? "it cites" : "they cite"}.`);
  if (check.factual_sentences) lines.push(`${check.grounded_sentences} of ${plural(check.factual_sentences, "factual sentence")} ${check.grounded_sentences === 1 ? "carries" : "carry"} a citation that checks out.`);
  if (!lines.length) lines.push("Nothing to check: no citations, quotes or factual sentences.");
  if ((check.unknown_ids || []).length) lines.push(`Markers that name no reference: ${check.unknown_ids.map((n) => `[${n}]`).join(", ")}.`);
  box.append(el("p", { text: lines.join(" ") }));
  if (problems) {
    box.append(table(["Problem", "Where", "Sentence or quote"], check.issues.map((i) => [
      `${words(ISSUE_REASONS[i.reason] || i.reason || i.kind)}${i.overlap != null ? ` (${pct(i.overlap)} of its words)` : ""}${i.detail ? `: ${i.detail}` : ""}`,
      [i.section, i.reference_id != null ? `[${i.reference_id}]` : ""].filter(Boolean).join(" · ") || "—",
      el("q", { text: i.sentence || "" })])));
  }
  return box;
}
const REVIEW_CHECKS = { 1: "structure", 2: "references", 3: "confidence tags", 4: "evidence spot-check", 5: "coverage", 6: "contradictions", 7: "gap directions" };
function peerReviewView(review) {
  const rounds = review.rounds || [];
  const issues = review.issues || [];
  const box = el("details", { class: "panel peer-review" },
    el("summary", { text: `Peer review: ${String(review.verdict || review.outcome || "").replace(/_/g, " ")}${rounds.length ? ` after ${plural(rounds.length, "round")}` : ""}` }));
  if (review.summary) box.append(el("p", { text: review.summary }));
  box.append(el("h4", { text: issues.length ? `Issues (${issues.length})` : "Issues" }));
  box.append(issues.length ? table(["Severity", "Check", "Where", "What"], issues.map((i) => [
    el("span", { class: `badge severity-${String(i.severity).toLowerCase()}`, text: String(i.severity).toLowerCase() }),
    REVIEW_CHECKS[i.check] || String(i.check ?? ""), i.section || "—",
    el("span", {}, i.description || "", i.evidence ? el("span", { class: "note", text: ` Evidence: ${i.evidence}` }) : null)])) : el("p", { text: "No issues raised." }));
  const missed = review.missed_papers || [];
  if (missed.length) {
    const ul = el("ul"); for (const m of missed) ul.append(el("li", {}, el("strong", { text: m.title || m.paper_id }), ` — ${m.reason || ""}${m.citations != null ? ` (cited ${m.citations} times)` : ""}`));
    box.append(el("h4", { text: `Papers the review may have missed (${missed.length})` }), ul);
  }
  if (rounds.length) {
    box.append(el("h4", { text: "Rounds" }), table(["Round", "Verdict", "Critical / major / minor", "Citations correct", "Grounded sentences"], rounds.map((r) => [
      r.iteration, String(r.verdict || "").replace(/_/g, " "), `${r.critical ?? 0} / ${r.major ?? 0} / ${r.minor ?? 0}`,
      r.citation_accuracy != null ? pct(r.citation_accuracy) : "—", r.grounding != null ? pct(r.grounding) : "—"])));
  }
  return box;
}
/* A verification's assessment (verdict, confidence, the sources each way). */
function assessmentView(a) {
  const box = el("details", { class: "panel assessment", open: true }, el("summary", { text: `Assessment: ${String(a.verdict || "").replace(/_/g, " ")}${a.confidence ? ` · confidence ${a.confidence}` : ""}` }));
  if (a.headline) box.append(el("p", { text: a.headline }));
  const shares = {};
  for (const k of ["support_share", "coverage", "mean_strength"]) if (typeof a[k] === "number") shares[k] = pct(a[k]);
  box.append(facts({ ...a, ...shares }, ["verdict", "confidence", "headline", "judge", "text"]));
  return box;
}
/* The judge's version and, when a language model checked the verdict, what it answered. */
function judgeView(meta) {
  const judge = meta.judge;
  const check = meta.llm_check;
  if (!judge && !check) return null;
  const box = el("div", { class: "judge" });
  if (judge) box.append(el("p", { class: "note", text: `Judged by ${judge}.` }));
  if (check && typeof check === "object") {
    const said = !check.ran ? `A language-model check did not run${check.reason ? `: ${check.reason}` : "."}`
      : `A language model checked the verdict and ${check.agrees ? "agrees" : "disagrees"}${check.answer ? ` (it answered “${check.answer}”)` : ""}${check.reason ? `: ${check.reason}` : "."}`;
    box.append(el("p", { class: check.ran && !check.agrees ? "warn llm-check" : "note llm-check", text: said }));
  }
  return box;
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
      const params = ev.params || {};
      const asked = ["query", "q", "claim", "topic", "prompt", "paper_id", "id"].map((k) => params[k]).find((v) => typeof v === "string" && v);
      const d = el("details", { class: "tool" }, el("summary", {}, el("span", { class: "badge", text: "tool" }), ` ${ev.tool_id}`, asked ? el("span", { class: "asked", text: ` “${asked.length > 80 ? asked.slice(0, 79) + "…" : asked}”` }) : null, el("span", { class: "tool-state", text: " … running" })),
        el("h4", { text: "Parameters" }), el("pre", { text: JSON.stringify(ev.params, null, 2) }));
      calls.set(ev.tool_call_id, d);
      return el("li", {}, d);
    }
    case "tool_progress": { const d = calls.get(ev.tool_call_id); if (d) { $(".tool-state", d).textContent = ` … ${ev.message}`; return null; } return el("li", { text: ev.message }); }
    case "tool_result": {
      const d = calls.get(ev.tool_call_id);
      const res = el("div", {}, el("h4", { text: ev.error ? "Error" : "Results" + (ev.truncated ? " (trimmed)" : "") }), el("pre", { text: ev.error || JSON.stringify(ev.results, null, 2) }));
      /* a model step shows its usage in the trace itself: the run's `llm.usage` step, or a step's own `usage` */
      const results = ev.results || {};
      const used = usageView(ev.tool_id === "llm.usage" ? results : results.usage, "li");
      const found = Array.isArray(ev.results) ? ev.results.length : Array.isArray(results.results) ? results.results.length : null;
      if (d) { d.append(res); $(".tool-state", d).textContent = ev.error ? " ✗ failed" : ` ✓ done${found != null ? ` · ${plural(found, "result")}` : ""}`; return used; }
      return used || el("li", {}, res);
    }
    case "message_chunk": {  // consecutive chunks grow one collapsible draft
      const last = $("#trace").lastElementChild;
      if (last && last.classList.contains("chunk")) { $(".draft", last).textContent += ev.text; return null; }
      return el("li", { class: "chunk" }, el("details", {}, el("summary", { text: `Draft from ${ev.agent} (streamed)` }), el("div", { class: "draft", text: ev.text })));
    }
    case "verdict": return el("li", { class: "verdict" }, el("span", { class: `badge verdict-${String(ev.verdict).toLowerCase().replace(/[^a-z]+/g, "-")}`, text: ev.verdict }),
      ` ${who}${ev.confidence ? " · confidence " + ev.confidence : ""}`, Object.keys(ev.details || {}).length ? el("details", {}, el("summary", { text: "details" }), el("pre", { text: JSON.stringify(ev.details, null, 2) })) : null);
    case "result": return el("li", { class: "done", text: `Result ready after ${ev.iterations} round(s)` });
    case "error": return el("li", { class: "error", text: `Error: ${ev.message}` });
    case "done": return el("li", { class: "done", text: `Run ${ev.status}` });
  }
  return null;
}

/* Follow a run's events from the first one: a page load (a reload, Back, a "trace" link) replays the
   stored history, so a finished run shows its whole trace and ends at its `done` event at once. The
   browser's EventSource resumes a dropped connection by itself (Last-Event-ID): nothing twice. */
function followRun(runId, { onDone, onResult, finished = () => "" } = {}) {
  const trace = $("#trace");
  const status = $("#run-status");
  const calls = new Map();
  const source = new EventSource(`${API}/runs/${encodeURIComponent(runId)}/events`, { withCredentials: true });
  status.textContent = finished() || "running";
  let count = 0;
  const handle = (msg) => {
    let ev;
    try { ev = JSON.parse(msg.data); } catch { return; }
    const item = traceItem(ev, calls);
    if (item) { item.dataset.eventId = msg.lastEventId; item.dataset.type = ev.type; trace.append(item); }
    count += 1; status.textContent = finished() || `running · ${count} events`;
    if (ev.type === "result" && onResult) onResult(ev);
    if (ev.type === "done") {
      source.close();
      status.textContent = ev.status;
      $("#run-progress")?.setAttribute("value", "1"); $("#run-progress")?.setAttribute("max", "1");
      if (onDone) onDone(ev);
    }
  };
  for (const t of EVENT_TYPES) source.addEventListener(t, handle);
  source.onerror = () => { if (source.readyState !== EventSource.CLOSED && !finished()) status.textContent = "reconnecting…"; };
  return source;
}
