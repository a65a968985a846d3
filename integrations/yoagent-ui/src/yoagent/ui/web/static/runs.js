// The run viewer: the opened records, a filtered and paged list of their runs, and one run
// as a timeline of its turns (paged: a run of 10,000 turns shows 100 at a time) with its
// tokens and cost per turn plotted, the files it changed and its outcome.

import { json } from "./api.js";
import { clear, count, dollars, duration, h, when } from "./dom.js";
import { COLORS, plotTurns } from "./plot.js";

const RUNS_PAGE = 50;
const TURNS_PAGE = 100;

function outcome(word) {
  return h("span", { class: `outcome ${word.split(":")[0]}` }, word);
}

function tokensOf(tokens) {
  return tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite;
}

export class Runs {
  constructor(root) {
    this.sourcesEl = root.querySelector("#sources");
    this.errorsEl = root.querySelector("#source-errors");
    this.listEl = root.querySelector("#run-list");
    this.detailEl = root.querySelector("#run-detail");
    this.filters = root.querySelector("#filters");
    this.fields = {
      outcome: root.querySelector("#f-outcome"),
      model: root.querySelector("#f-model"),
      min_cost: root.querySelector("#f-min"),
      max_cost: root.querySelector("#f-max"),
      q: root.querySelector("#f-text"),
    };
    this.sources = [];
    this.source = null;
    this.offset = 0;
    root.querySelector("#open-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.open(root.querySelector("#open-path"));
    });
    this.filters.addEventListener("submit", (event) => event.preventDefault());
    this.filters.addEventListener("input", () => {
      clearTimeout(this.pending);
      this.pending = setTimeout(() => { this.offset = 0; this.list(); }, 200);
    });
    window.addEventListener("resize", () => this.redraw && this.redraw());
  }

  async show(sources) {
    this.sources = sources;
    if (!this.source && sources.length) this.source = sources[0].id;
    this.drawSources();
    if (this.source) await this.list();
  }

  async open(input) {
    const path = input.value.trim();
    if (!path) return;
    try {
      const source = await json("api/sources", { path });
      input.value = "";
      this.sources = this.sources.filter((s) => s.id !== source.id).concat([source]);
      this.source = source.id;
      this.offset = 0;
      this.drawSources();
      await this.list();
    } catch (error) {
      this.errorsEl.replaceChildren(h("p", { class: "problem" }, error.message));
    }
  }

  drawSources() {
    clear(this.sourcesEl);
    for (const source of this.sources) {
      this.sourcesEl.append(h("button", {
        type: "button", class: "quiet source", "aria-pressed": String(source.id === this.source),
        title: source.path,
        onclick: () => { this.source = source.id; this.offset = 0; this.drawSources(); this.list(); },
      }, `${source.kind === "gasp" ? "GASP" : "cassette"}: ${source.path.split("/").filter(Boolean).pop()}`));
    }
  }

  query() {
    const params = new URLSearchParams({ source: this.source, offset: this.offset, limit: RUNS_PAGE });
    for (const [key, field] of Object.entries(this.fields)) if (field.value) params.set(key, field.value);
    return params;
  }

  async list() {
    let data;
    try {
      data = await json(`api/runs?${this.query()}`);
    } catch (error) {
      this.errorsEl.replaceChildren(h("p", { class: "problem" }, error.message));
      return;
    }
    const source = data.source;
    const problems = source.error ? [source.error] : source.problems;
    this.errorsEl.replaceChildren(...problems.map((text) => h("p", { class: "problem" }, text)));
    if (source.moreProblems) this.errorsEl.append(h("p", { class: "problem" }, `… and ${source.moreProblems} more lines left out`));
    this.options(this.fields.outcome, data.outcomes);
    this.options(this.fields.model, data.models);
    clear(this.listEl);
    if (!data.runs.length) {
      this.listEl.append(h("p", { class: "note" }, source.error ? "Nothing could be read." : "No run matches."));
      return;
    }
    const rows = data.runs.map((run) => {
      const row = h("tr", { tabindex: 0, "data-run": run.id, onclick: () => this.detail(run.id, 0),
        onkeydown: (event) => { if (event.key === "Enter") this.detail(run.id, 0); } },
        h("td", { class: "hide-narrow" }, when(run.start)),
        h("td", { class: "task" }, run.task || "(no task)"),
        h("td", {}, outcome(run.outcome)),
        h("td", { class: "hide-narrow" }, run.models.join(", ")),
        h("td", { class: "num" }, run.turns),
        h("td", { class: "num hide-narrow" }, count(tokensOf(run.tokens))),
        h("td", { class: "num cost" }, dollars(run.costUsd)),
        h("td", { class: "num hide-narrow" }, duration(run.durationMs)));
      return row;
    });
    this.listEl.append(
      h("table", {}, h("caption", { class: "visually-hidden" }, "Recorded runs"),
        h("thead", {}, h("tr", {}, ["When", "Task", "Outcome", "Model", "Turns", "Tokens", "Cost", "Time"].map((name, i) =>
          h("th", { scope: "col", class: [i === 0 || i === 3 || i === 5 || i === 7 ? "hide-narrow" : "", i >= 4 ? "num" : ""].join(" ") }, name)))),
        h("tbody", {}, rows)),
      this.pager(data.offset, RUNS_PAGE, data.total, "runs", (offset) => { this.offset = offset; this.list(); }),
    );
  }

  options(select, values) {
    const chosen = select.value;
    clear(select).append(h("option", { value: "" }, "any"), ...values.map((value) => h("option", { value }, value)));
    select.value = values.includes(chosen) ? chosen : "";
  }

  pager(offset, size, total, what, go) {
    const last = Math.max(0, Math.ceil(total / size) - 1);
    const page = Math.floor(offset / size);
    return h("nav", { class: "pager", "aria-label": `Pages of ${what}` },
      h("button", { type: "button", class: "quiet", disabled: page === 0, onclick: () => go((page - 1) * size) }, "Previous"),
      h("span", {}, `${total ? offset + 1 : 0}–${Math.min(total, offset + size)} of ${count(total)} ${what}`),
      h("button", { type: "button", class: "quiet", disabled: page >= last, onclick: () => go((page + 1) * size) }, "Next"));
  }

  async detail(runId, offset) {
    const run = await json(`api/runs/${this.source}/${encodeURIComponent(runId)}?offset=${offset}&limit=${TURNS_PAGE}`);
    const el = this.detailEl;
    el.hidden = false;
    clear(el);
    const total = tokensOf(run.tokens);
    el.append(
      h("h2", { tabindex: -1 }, run.task || run.id),
      h("dl", { class: "facts" },
        h("div", {}, h("dt", {}, "Outcome"), h("dd", {}, outcome(run.outcome))),
        h("div", {}, h("dt", {}, "Cost"), h("dd", { class: "run-cost" }, dollars(run.costUsd))),
        h("div", {}, h("dt", {}, "Tokens"), h("dd", {}, count(total))),
        h("div", {}, h("dt", {}, "Turns"), h("dd", {}, count(run.turns))),
        h("div", {}, h("dt", {}, "Tool calls"), h("dd", {}, count(run.toolCalls))),
        h("div", {}, h("dt", {}, "Time"), h("dd", {}, duration(run.durationMs))),
        h("div", {}, h("dt", {}, "Model"), h("dd", {}, run.models.join(", ") || "—"))),
    );
    if (run.parent) el.append(h("p", {}, h("button", { type: "button", class: "quiet", onclick: () => this.detail(run.parent, 0) }, "↑ The run that delegated this one")));
    const canvas = h("canvas", { class: "plot", role: "img", "aria-label": `Tokens and cost of each of the ${run.turns} turns; click a turn to see it` });
    el.append(h("h3", {}, "Tokens and cost per turn"), canvas,
      h("p", { class: "legend" },
        [["prompt", "prompt"], ["cache", "cache read"], ["output", "output"], ["cost", "cost"]].map(([key, label]) =>
          h("span", {}, h("span", { class: "swatch", style: `background:${COLORS[key]}` }), label))));
    this.redraw = plotTurns(canvas, run.series, (turn) => this.detail(runId, Math.floor(turn / TURNS_PAGE) * TURNS_PAGE));
    el.append(h("h3", {}, `Files changed (${run.files.length})`),
      run.files.length ? h("ul", { class: "files" }, run.files.map((file) => h("li", {}, file))) : h("p", { class: "note" }, "None."));
    el.append(h("h3", {}, "Timeline"), this.timeline(run),
      this.pager(run.offset, TURNS_PAGE, run.turns, "turns", (next) => this.detail(runId, next)));
    el.querySelector("h2").focus();
  }

  timeline(run) {
    const turns = run.page;
    const times = turns.flatMap((turn) => [turn.start, turn.end, ...turn.tools.flatMap((t) => [t.start, t.end])]).filter((t) => t !== null);
    const from = Math.min(...times), to = Math.max(...times);
    const span = Math.max(1, to - from);
    const place = (start, end) => {
      const left = start === null ? 0 : ((start - from) / span) * 100;
      const right = end === null ? left : ((end - from) / span) * 100;
      return `left:${left.toFixed(3)}%;width:${Math.max(0, right - left).toFixed(3)}%`;
    };
    const lanes = turns.map((turn) => {
      const model = turn.start !== null && turn.end !== null ? turn.end - turn.start : null;
      const spans = [h("span", { class: "span model", style: place(turn.start, turn.end), title: `model call ${turn.model}: ${duration(model)}` })];
      for (const tool of turn.tools) {
        spans.push(h("span", { class: `span tool${tool.ok === false ? " failed" : ""}`, style: place(tool.start, tool.end ?? tool.start),
          title: `${tool.name}: ${duration(tool.end !== null && tool.start !== null ? tool.end - tool.start : null)}` }));
      }
      const summary = h("summary", { class: "lane" },
        h("span", {}, `#${turn.index}`),
        h("span", { class: "track", "aria-hidden": "true" }, spans),
        h("span", { class: "num lane-cost" }, `${count(tokensOf(turn.tokens))} tok · ${dollars(turn.costUsd)}`),
        h("span", { class: "visually-hidden" }, `model call ${duration(model)}; ${turn.tools.length} tool calls`));
      const tools = turn.tools.map((tool) => h("li", {},
        h("span", { class: "tool-name" }, tool.name), " ",
        h("span", { class: `status ${tool.ok === false ? "failed" : tool.ok ? "done" : "running"}` }, tool.ok === false ? "failed" : tool.ok ? "ok" : "no result"),
        ` ${duration(tool.end !== null && tool.start !== null ? tool.end - tool.start : null)} `,
        tool.runId ? h("button", { type: "button", class: "quiet", onclick: () => this.detail(tool.runId, 0) }, "open its run") : null,
        h("pre", {}, tool.arguments), tool.output ? h("pre", {}, tool.output) : null));
      return h("details", { class: "turn", "data-turn": turn.index }, summary,
        h("div", { class: "turn-body" },
          h("p", {}, `${turn.model || "model"} · ${duration(model)} · in ${count(turn.tokens.input)} · out ${count(turn.tokens.output)} · cache ${count(turn.tokens.cacheRead)} · ${dollars(turn.costUsd)}`),
          turn.output ? h("pre", {}, turn.output) : null,
          tools.length ? h("ul", {}, tools) : null));
    });
    return h("div", { class: "timeline" }, lanes);
  }
}
