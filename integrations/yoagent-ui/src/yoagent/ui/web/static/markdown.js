// A small, safe Markdown renderer for the model's replies.
//
// Safe by construction: it builds DOM nodes, and every piece of the model's text becomes a
// text node — no HTML from the model is ever parsed (a `<script>` in a reply shows as
// text). Links are kept only for http(s) and mailto URLs, open in a new tab, and send no
// referrer. It covers what replies use: paragraphs, headings, emphasis, inline and fenced
// code, lists, block quotes, rules, tables and links; anything else stays plain text.

import { h } from "./dom.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const BULLET = /^ {0,3}([-*+])\s+(.*)$/;
const ORDERED = /^ {0,3}(\d{1,9})[.)]\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

/** `text` rendered as a fragment of block elements. */
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  blocks(String(text).replace(/\r\n?/g, "\n").split("\n"), out);
  return out;
}

function blocks(lines, out) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i++;
      const code = h("code", {}, body.join("\n"));
      if (m[2]) code.dataset.lang = m[2];
      out.append(h("pre", {}, code));
      continue;
    }
    if ((m = HEADING.exec(line))) {
      const level = Math.min(6, m[1].length + 2);
      out.append(inline(h(`h${level}`), m[2]));
      i++;
      continue;
    }
    if (RULE.test(line)) { out.append(h("hr")); i++; continue; }
    if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) { inner.push(m[1]); i++; }
      const quote = h("blockquote");
      blocks(inner, quote);
      out.append(quote);
      continue;
    }
    if (BULLET.test(line) || ORDERED.test(line)) {
      const ordered = !BULLET.test(line);
      const pattern = ordered ? ORDERED : BULLET;
      const list = h(ordered ? "ol" : "ul");
      if (ordered) {
        const start = Number(ORDERED.exec(line)[1]);
        if (start !== 1) list.start = start;
      }
      const items = [];
      while (i < lines.length && lines[i].trim()) {
        const found = pattern.exec(lines[i]);
        if (found) items.push([found[2]]);
        else if (items.length && /^\s+/.test(lines[i])) items[items.length - 1].push(lines[i].trim());
        else break;
        i++;
      }
      for (const item of items) list.append(inline(h("li"), item.join("\n")));
      out.append(list);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      const head = cells(line);
      const body = [];
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) body.push(cells(lines[i++]));
      out.append(
        h("table", {},
          h("thead", {}, h("tr", {}, head.map((cell) => inline(h("th"), cell)))),
          h("tbody", {}, body.map((row) => h("tr", {}, row.map((cell) => inline(h("td"), cell))))),
        ),
      );
      continue;
    }
    const para = [];
    while (
      i < lines.length && lines[i].trim() && !FENCE.test(lines[i]) && !HEADING.test(lines[i]) &&
      !QUOTE.test(lines[i]) && !RULE.test(lines[i]) && !(para.length && (BULLET.test(lines[i]) || ORDERED.test(lines[i])))
    ) para.push(lines[i++]);
    out.append(inline(h("p"), para.join("\n")));
  }
}

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((cell) => cell.trim());
}

const INLINE = [
  { re: /`+/, make: codeSpan },
  { re: /\[([^\]\n]+)\]\(([^)\s]+)\)/, make: (m) => link(m[1], m[2]) },
  { re: /<(https?:\/\/[^>\s]+)>/, make: (m) => link(m[1], m[1]) },
  { re: /\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__/, make: (m) => inline(h("strong"), m[1] ?? m[2]) },
  { re: /\*(?=[^\s*])([\s\S]*?[^\s*])\*|(?<![\w])_(?=\S)([\s\S]*?\S)_(?![\w])/, make: (m) => inline(h("em"), m[1] ?? m[2]) },
  { re: /~~(?=\S)([\s\S]*?\S)~~/, make: (m) => inline(h("del"), m[1]) },
  { re: /\n/, make: () => h("br") },
];

/** Append `text`'s inline Markdown to `el`; returns `el`. */
export function inline(el, text) {
  let rest = text;
  while (rest) {
    let best = null;
    for (const rule of INLINE) {
      const m = rule.re.exec(rest);
      if (m && (best === null || m.index < best.m.index)) best = { m, rule };
    }
    if (!best) { el.append(rest); break; }
    const { m, rule } = best;
    if (m.index) el.append(rest.slice(0, m.index));
    const made = rule.make(m, rest.slice(m.index));
    if (made.consumed !== undefined) {
      el.append(made.node);
      rest = rest.slice(m.index + made.consumed);
    } else {
      el.append(made);
      rest = rest.slice(m.index + m[0].length);
    }
  }
  return el;
}

function codeSpan(m, from) {
  const ticks = m[0];
  const end = from.indexOf(ticks, ticks.length);
  if (end < 0) return { node: document.createTextNode(ticks), consumed: ticks.length };
  const body = from.slice(ticks.length, end).replace(/\n/g, " ");
  const trimmed = body.length > 2 && body.startsWith(" ") && body.endsWith(" ") ? body.slice(1, -1) : body;
  return { node: h("code", {}, trimmed), consumed: end + ticks.length };
}

function link(label, target) {
  let url = null;
  try {
    url = new URL(target);
  } catch {
    url = null;
  }
  if (!url || !["http:", "https:", "mailto:"].includes(url.protocol)) return inline(h("span"), label);
  return inline(h("a", { href: url.href, target: "_blank", rel: "noopener noreferrer nofollow" }), label);
}
