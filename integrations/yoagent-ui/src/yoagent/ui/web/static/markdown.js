// A small, safe Markdown renderer for the model's replies.
//
// Safe by construction: it builds DOM nodes, and every piece of the model's text becomes a
// text node — no HTML from the model is ever parsed (a `<script>` in a reply shows as
// text). Links are kept only for http(s) and mailto URLs, open in a new tab, and send no
// referrer. It covers what replies use: paragraphs, headings, emphasis, inline and fenced
// code, lists, block quotes, rules, tables and links; anything else stays plain text.
//
// Linear in the text: inline markup is found by one scan, each closer looked for once
// (an unmatched `*` or `` ` `` costs no rescan of the rest), and a streamed reply
// (`MarkdownView`) renders only its unsettled tail on each update.

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
  blocks(normalized(text).split("\n"), out);
  return out;
}

function normalized(text) {
  return String(text).replace(/\r\n?/g, "\n");
}

/**
 * A reply's Markdown in `container`, kept up to date as the reply grows: `update(text)`
 * renders only what follows the blocks already settled (a block is settled once the
 * complete line after it is known), so streaming costs the tail, not the whole reply.
 */
export class MarkdownView {
  constructor(container) {
    this.container = container;
    this.prefix = ""; // the text of the settled blocks, with the newline after them
    this.tail = null;
  }

  update(text) {
    const whole = normalized(text);
    if (!whole.startsWith(this.prefix)) {  // not a continuation: start again
      this.prefix = "";
      this.tail = null;
      this.container.replaceChildren();
    }
    const lines = whole.slice(this.prefix.length).split("\n");
    const tail = document.createDocumentFragment();
    let done = 0;
    let open = false;
    for (const { node, end } of blockNodes(lines)) {
      if (!open && end < lines.length - 1) {  // the line after it is complete: settled
        this.container.insertBefore(node, this.tail && this.tail.first);
        done = end;
      } else {
        open = true;
        tail.append(node);
      }
    }
    if (done) this.prefix += lines.slice(0, done).join("\n") + "\n";
    this.replaceTail(tail);
  }

  replaceTail(tail) {
    if (this.tail) for (const node of this.tail.nodes) node.remove();
    const nodes = [...tail.childNodes];
    this.container.append(tail);
    this.tail = { nodes, first: nodes[0] ?? null };
  }
}

function blocks(lines, out) {
  for (const { node } of blockNodes(lines)) out.append(node);
}

/** The blocks of `lines`, each with the index of the line after it (`end`). */
function* blockNodes(lines) {
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
      yield { node: h("pre", {}, code), end: i };
      continue;
    }
    if ((m = HEADING.exec(line))) {
      const level = Math.min(6, m[1].length + 2);
      i++;
      yield { node: inline(h(`h${level}`), m[2]), end: i };
      continue;
    }
    if (RULE.test(line)) { i++; yield { node: h("hr"), end: i }; continue; }
    if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) { inner.push(m[1]); i++; }
      const quote = h("blockquote");
      blocks(inner, quote);
      yield { node: quote, end: i };
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
      yield { node: list, end: i };
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      const head = cells(line);
      const body = [];
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) body.push(cells(lines[i++]));
      yield {
        end: i,
        node: h("table", {},
          h("thead", {}, h("tr", {}, head.map((cell) => inline(h("th"), cell)))),
          h("tbody", {}, body.map((row) => h("tr", {}, row.map((cell) => inline(h("td"), cell))))),
        ),
      };
      continue;
    }
    const para = [];
    while (
      i < lines.length && lines[i].trim() && !FENCE.test(lines[i]) && !HEADING.test(lines[i]) &&
      !QUOTE.test(lines[i]) && !RULE.test(lines[i]) && !(para.length && (BULLET.test(lines[i]) || ORDERED.test(lines[i])))
    ) para.push(lines[i++]);
    yield { node: inline(h("p"), para.join("\n")), end: i };
  }
}

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((cell) => cell.trim());
}

// Inline markup, found by one left-to-right scan. At each position the rules are tried in
// this order, the first that matches wins: code spans, links, autolinks, strong, emphasis,
// strikethrough, line breaks. A closer is looked for through a `Closers` search, which
// never scans the same stretch of text twice: an opener with no closer costs nothing more.
const SPECIAL = /[`[<*_~\n]/g;
const CLOSERS = {
  "**": /(?<=\S)\*\*/g,
  "__": /(?<=\S)__/g,
  "*": /(?<=[^\s*])\*/g,
  "_": /(?<=\S)_(?!\w)/g,
  "~~": /(?<=\S)~~/g,
  "]": /[\]\n]/g,
  ")": /[)\s]/g,
  ">": /[>\s]/g,
};

/** The first match of a pattern at or after a position, each stretch of text searched once
 * (positions asked for only grow, as the scan goes on); and each code span's closer. */
class Closers {
  constructor(text) {
    this.text = text;
    this.found = new Map();
    this.runs = null;
  }

  at(key, from, pattern) {
    const known = this.found.get(key);
    if (known && from >= known.from && (known.at < 0 || from <= known.at)) return known.at;
    pattern.lastIndex = from;
    const m = pattern.exec(this.text);
    const at = m ? m.index : -1;
    this.found.set(key, { from, at });
    return at;
  }

  /** Where the `ticks` beginning at `start` close: the first later run of at least as many
   * backticks, or -1. */
  code(start, ticks) {
    if (start > 0 && this.text[start - 1] === "`") {  // what a longer closer left over
      return this.text.indexOf(ticks, start + ticks.length);
    }
    if (this.runs === null) this.runs = closingRuns(this.text);
    return this.runs.get(start) ?? -1;
  }
}

/** For each run of backticks in `text` (by where it starts), where the first later run at
 * least as long starts: one pass, the runs still waiting kept longest first. */
function closingRuns(text) {
  const closing = new Map();
  const waiting = [];
  for (let i = text.indexOf("`"); i >= 0; ) {
    let end = i;
    while (text[end] === "`") end++;
    const length = end - i;
    while (waiting.length && waiting[waiting.length - 1].length <= length) closing.set(waiting.pop().start, i);
    waiting.push({ start: i, length });
    i = text.indexOf("`", end);
  }
  return closing;
}

/** Append `text`'s inline Markdown to `el`; returns `el`. */
export function inline(el, text) {
  const closers = new Closers(text);
  let start = 0; // where the plain text not yet appended begins
  let i = 0;
  while (i < text.length) {
    SPECIAL.lastIndex = i;
    const found = SPECIAL.exec(text);
    if (!found) break;
    i = found.index;
    const made = token(text, i, start, closers);
    if (made === null) { i++; continue; }
    if (i > start) el.append(text.slice(start, i));
    el.append(made.node);
    i = start = made.end;
  }
  if (start < text.length) el.append(text.slice(start));
  return el;
}

/** The inline element beginning at `i` (`node`, and `end` where the text goes on after it),
 * or `null`. `start` is where the text after the last element begins (a `_` opener must not
 * follow a word character after it). */
function token(text, i, start, closers) {
  const c = text[i];
  const next = text[i + 1];
  if (c === "`") {
    let run = i;
    while (text[run] === "`") run++;
    const ticks = text.slice(i, run);
    const end = closers.code(i, ticks);
    if (end < 0) return { node: document.createTextNode(ticks), end: run };
    const body = text.slice(run, end).replace(/\n/g, " ");
    const trimmed = body.length > 2 && body.startsWith(" ") && body.endsWith(" ") ? body.slice(1, -1) : body;
    return { node: h("code", {}, trimmed), end: end + ticks.length };
  }
  if (c === "[") {
    const close = closers.at("]", i + 1, CLOSERS["]"]);
    if (close <= i + 1 || text[close] !== "]" || text[close + 1] !== "(") return null;
    const stop = closers.at(")", close + 2, CLOSERS[")"]);
    if (stop <= close + 2 || text[stop] !== ")") return null;
    return { node: link(text.slice(i + 1, close), text.slice(close + 2, stop)), end: stop + 1 };
  }
  if (c === "<") {
    const scheme = text.startsWith("http://", i + 1) ? 8 : text.startsWith("https://", i + 1) ? 9 : 0;
    if (!scheme) return null;
    const stop = closers.at(">", i + scheme, CLOSERS[">"]);
    if (stop <= i + scheme || text[stop] !== ">") return null;
    const url = text.slice(i + 1, stop);
    return { node: link(url, url), end: stop + 1 };
  }
  if ((c === "*" || c === "_") && next === c) {
    const made = pair(text, i, c + c, "strong", closers);
    if (made) return made;
  }
  if (c === "*" && next !== undefined && !/[\s*]/.test(next)) {
    const made = pair(text, i, "*", "em", closers);
    if (made) return made;
  }
  if (c === "_" && (i === start || !/\w/.test(text[i - 1]))) {
    const made = pair(text, i, "_", "em", closers);
    if (made) return made;
  }
  if (c === "~" && next === "~") return pair(text, i, "~~", "del", closers);
  if (c === "\n") return { node: h("br"), end: i + 1 };
  return null;
}

/** `delim`…`delim` around text starting at `i`, as a `tag` element: its first character
 * not a space, and the closer after at least one character, right after a non-space. */
function pair(text, i, delim, tag, closers) {
  const from = i + delim.length;
  if (from >= text.length || /\s/.test(text[from])) return null;
  const close = closers.at(delim, from + 1, CLOSERS[delim]);
  if (close < 0) return null;
  return { node: inline(h(tag), text.slice(from, close)), end: close + delim.length };
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
