// The page's Markdown renderer in Node (run by test_markdown.py): what it renders, that it
// stays linear on adversarial replies, and that a streamed reply renders as the whole would.
// Prints one JSON line: {"failures": [...], "timings": {...}}.
import { element, html, inner } from "./fake_dom.mjs";

const { renderMarkdown, MarkdownView } = await import("../../src/yoagent/ui/web/static/markdown.js");

const failures = [];
const timings = {};
const check = (name, got, want) => {
  if (got !== want) failures.push({ name, got: got.slice(0, 300), want: want.slice(0, 300) });
};
const md = (text) => html(renderMarkdown(text));

// --- what it renders
const cases = [
  ["strong and em", "**bold** and *it* and _it_ and __b__", "<p><strong>bold</strong> and <em>it</em> and <em>it</em> and <strong>b</strong></p>"],
  ["nested", "**a *b* c**", "<p><strong>a <em>b</em> c</strong></p>"],
  ["star run", "***a***", "<p><strong>*a</strong>*</p>"],
  ["unmatched", "2 * 3 * x and a*b", "<p>2 * 3 * x and a*b</p>"],
  ["em needs a closer after a non-space", "*a * b*", "<p><em>a * b</em></p>"],
  ["underscore inside words", "snake_case_name and _x_", "<p>snake_case_name and <em>x</em></p>"],
  ["underscore after strong", "__a___b_", "<p><strong>a</strong><em>b</em></p>"],
  ["code", "use `x *y*` or ``a ` b``", "<p>use <code>x *y*</code> or <code>a ` b</code></p>"],
  ["unclosed code", "a `b", "<p>a `b</p>"],
  ["a longer closer", "``a``` b`", "<p><code>a</code><code> b</code></p>"],
  ["what a closer leaves", "`a``", "<p><code>a</code>`</p>"],
  ["link", "[the *docs*](https://x.io/a) and [bad](javascript:alert(1))", '<p><a href="https://x.io/a" rel="noopener noreferrer nofollow" target="_blank">the <em>docs</em></a> and <span>bad</span>)</p>'],
  ["autolink", "see <https://x.io> or <ftp://x>", '<p>see <a href="https://x.io/" rel="noopener noreferrer nofollow" target="_blank">https://x.io</a> or &lt;ftp://x&gt;</p>'],
  ["del and br", "~~gone~~\nnext", "<p><del>gone</del><br></br>next</p>"],
  ["html stays text", "<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"],
  ["blocks", "# T\n\n- a\n- *b*\n\n```py\nx = 1\n\ny\n```\n> q\n\n| a | b |\n|---|---|\n| 1 | 2 |",
    '<h3>T</h3><ul><li>a</li><li><em>b</em></li></ul><pre><code data-lang="py">x = 1\n\ny</code></pre><blockquote><p>q</p></blockquote><table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>'],
];
for (const [name, text, want] of cases) check(name, md(text), want);

// --- linear: 120,000 characters of openers that never close render as text, quickly
const adversarial = {
  em: "*a ".repeat(40000),
  strong: "**a ".repeat(30000),
  underscore: "_a ".repeat(40000),
  strike: "~~a ".repeat(30000),
  code: Array.from({ length: 480 }, (_, k) => `${"`".repeat(480 - k)}a`).join(""),
  link: "[a](b ".repeat(20000),
  label: "[".repeat(120000),
  autolink: "<https://a ".repeat(11000),
};
for (const [name, text] of Object.entries(adversarial)) {
  const started = performance.now();
  const got = md(text);
  timings[name] = Math.round(performance.now() - started);
  check(`linear ${name}`, got, `<p>${text.replace(/</g, "&lt;")}</p>`);
}

// --- streaming: a reply fed in pieces shows, after each, what the whole text renders
const reply = [
  "# Plan\n\nFirst *look* at the **code**:\n\n```python\ndef f():\n\n    return 1\n```\n\n",
  "- one\n- two\n  more\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n> again\n\nA `span` and ",
  "[a link](https://x.io).\n\n---\n\nThe end_\n",
].join("");
const container = element("div");
const view = new MarkdownView(container);
let firstBlock = null;
for (let cut = 1; cut <= reply.length; cut += 1 + (cut % 7)) {
  view.update(reply.slice(0, cut));
  check(`stream at ${cut}`, inner(container), md(reply.slice(0, cut)));
  if (cut > 10 && firstBlock === null) firstBlock = container.childNodes[0];
}
view.update(reply);
check("stream whole", inner(container), md(reply));
if (container.childNodes[0] !== firstBlock) failures.push({ name: "a settled block was rendered again" });
view.update("Another reply");  // not a continuation: rendered from the start
check("stream restart", inner(container), md("Another reply"));

console.log(JSON.stringify({ failures, timings }));
