// The chat: a prompt goes out as an AG-UI run; its events stream into the conversation
// (text as Markdown, reasoning and long tool output collapsed, sub-agents nested); held
// calls wait for the person's answer, which resumes the run.

import { json, runEvents } from "./api.js";
import { append, clear, dollars, h } from "./dom.js";
import { MarkdownView } from "./markdown.js";
import { hasHidden, visible } from "./visible.js";

const LONG = 400; // characters past which a tool's arguments or result start collapsed

/** A fresh random id (works outside secure contexts too). */
export function newId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function collapsible(label, text) {
  const body = h("pre", {}, visible(text));
  return h("details", { open: text.length <= LONG && text.split("\n").length <= 12 }, h("summary", {}, label), body);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class Chat {
  constructor(root) {
    this.log = root.querySelector("#log");
    this.form = root.querySelector("#composer");
    this.prompt = root.querySelector("#prompt");
    this.sendButton = root.querySelector("#send");
    this.stopButton = root.querySelector("#stop");
    this.approvals = root.querySelector("#approvals");
    this.approvalList = root.querySelector("#approval-list");
    this.fill = root.querySelector("#fill");
    this.fillText = root.querySelector("#fill-text");
    this.costText = root.querySelector("#cost");
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.prompt.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      }
    });
    this.stopButton.addEventListener("click", () => this.stop());
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.controller) this.stop();
    });
    root.querySelector("#new-chat").addEventListener("click", () => this.reset());
    this.reset();
  }

  reset() {
    if (this.controller) this.stop();
    this.threadId = newId();
    this.messages = [];
    this.bubbles = new Map();
    this.reasoning = new Map();
    this.tools = new Map();
    this.subagents = new Map();
    this.spent = 0;
    this.stale = false;
    this.held = null;
    this.unpriced = false;
    this.runCost = 0;
    clear(this.log);
    this.hideApprovals();
    this.showSpend();
    this.fill.value = 0;
    this.fillText.textContent = "0%";
    this.prompt.focus();
  }

  async submit() {
    // Busy until the run before has ended and its thread is read back: a prompt sent in
    // between would go out on the history from before that run.
    if (!this.prompt.value.trim() || this.active) return;
    if (this.stale) {
      // The thread could not be read back after the last run: read it now, or send nothing
      // (the prompt keeps the text; the note says why).
      this.busy(true);
      const read = await this.refresh();
      this.busy(false);
      if (!read) return;
      if (this.held) {
        const interrupts = this.held;
        this.held = null;
        await this.showApprovals(interrupts);
        return;
      }
    }
    const text = this.prompt.value; // as it is now: typing went on while the thread was read
    if (!text.trim()) return;
    this.prompt.value = "";
    this.log.append(h("div", { class: "msg user" }, text));
    this.scroll(true);
    this.run({ messages: [...this.messages, { id: newId(), role: "user", content: text }] });
  }

  stop() {
    if (!this.controller) return;
    this.stopped = true;
    this.controller.abort();
  }

  busy(on) {
    this.active = on;
    this.sendButton.disabled = on;
    this.stopButton.disabled = !(on && this.controller); // a read-back has nothing to stop
    this.log.setAttribute("aria-busy", on ? "true" : "false");
  }

  async run(extra) {
    const input = { threadId: this.threadId, runId: newId(), tools: [], context: [], state: {}, forwardedProps: {}, ...extra };
    this.controller = new AbortController();
    this.stopped = false;
    this.busy(true);
    let outcome = null;
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          for await (const event of runEvents("api/agui", input, this.controller.signal)) {
            this.apply(event);
            if (event.type === "RUN_FINISHED") outcome = event.outcome || { type: "success" };
          }
          break;
        } catch (error) {
          // The thread is still closing the run before (a Stop a moment ago): try again.
          if (error.status === 409 && attempt < 40 && !this.stopped) await sleep(150);
          else throw error;
        }
      }
    } catch (error) {
      if (error.name === "AbortError") this.note("Stopped.");
      else this.note(`The run could not go on: ${error.message}`, "error");
    } finally {
      this.controller = null;
      this.busy(true); // still busy while the thread is read back, with nothing to stop
    }
    const read = await this.refresh();
    this.busy(false);
    if (this.threadId !== input.threadId) return; // a new chat began meanwhile
    const interrupts = outcome && outcome.type === "interrupt" ? outcome.interrupts || [] : null;
    if (interrupts && !read) this.held = interrupts; // shown once the thread is read back
    else if (interrupts) await this.showApprovals(interrupts);
    else this.prompt.focus();
  }

  /**
   * Reads the thread back as the server stored it (what the next run sends), once its
   * run has ended. False when it could not (a note says why; the next prompt reads it
   * again first); true, keeping nothing, when a new chat began meanwhile.
   */
  async refresh() {
    const threadId = this.threadId;
    let problem = "its run is still ending";
    try {
      for (let attempt = 0; attempt < 100; attempt++) {
        const thread = await json(`api/threads/${threadId}`);
        if (this.threadId !== threadId) return true;
        if (!thread.running) {
          this.messages = thread.messages;
          this.stale = false;
          for (const message of thread.messages) {
            if (message.role === "tool" && message.error) {
              const tool = this.tools.get(message.toolCallId);
              if (tool) this.status(tool, message.error.startsWith("Tool call denied") ? "denied" : "failed");
            }
          }
          return true;
        }
        await sleep(50);
      }
    } catch (error) {
      if (this.threadId !== threadId) return true;
      problem = error.message;
    }
    this.stale = true;
    this.note(`The conversation could not be read back (${problem}); the next prompt reads it again first.`, "error");
    return false;
  }

  scroll(force = false) {
    const near = window.innerHeight + window.scrollY >= document.body.scrollHeight - 160;
    if (force || near) window.scrollTo(0, document.body.scrollHeight);
  }

  note(text, kind = "") {
    this.log.append(h("p", { class: `note ${kind}`, role: kind === "error" ? "alert" : null }, text));
    this.scroll();
  }

  where(event) {
    const sub = event.subagentRunId && this.subagents.get(event.subagentRunId);
    return sub ? sub.body : this.log;
  }

  apply(event) {
    switch (event.type) {
      case "TEXT_MESSAGE_START": this.bubble(event); break;
      case "TEXT_MESSAGE_CONTENT": {
        const bubble = this.bubble(event);
        bubble.text += event.delta;
        this.paint(bubble);
        break;
      }
      case "TEXT_MESSAGE_END": {
        const bubble = this.bubbles.get(event.messageId);
        if (bubble) this.paint(bubble, true);
        break;
      }
      case "REASONING_START":
      case "REASONING_MESSAGE_START": this.thinking(event); break;
      case "REASONING_MESSAGE_CONTENT": this.thinking(event).text.append(event.delta); break;
      case "TOOL_CALL_START": this.toolStart(event); break;
      case "TOOL_CALL_ARGS": {
        const tool = this.tools.get(event.toolCallId);
        if (tool) { tool.args += event.delta; tool.argsBox.textContent = tool.args; }
        break;
      }
      case "TOOL_CALL_END": {
        const tool = this.tools.get(event.toolCallId);
        if (tool) tool.argsSlot.replaceChildren(collapsible("Arguments", pretty(tool.args || "{}")));
        break;
      }
      case "TOOL_CALL_RESULT": {
        const tool = this.tools.get(event.toolCallId);
        if (!tool) break;
        const text = typeof event.content === "string" ? event.content : JSON.stringify(event.content);
        tool.resultSlot.replaceChildren(collapsible("Result", text));
        tool.progress.textContent = "";
        this.status(tool, text.startsWith("Tool call denied") ? "denied" : "done");
        break;
      }
      case "SUBAGENT_STARTED": {
        const parent = this.tools.get(event.parentToolCallId);
        const body = h("div", { class: "subagent", role: "group", "aria-label": `Sub-agent ${event.name}` },
          h("span", { class: "subagent-title" }, `sub-agent ${event.name}`));
        (parent ? parent.sub : this.where(event)).append(body);
        this.subagents.set(event.subagentRunId, { body });
        break;
      }
      case "SUBAGENT_ERROR": {
        const sub = this.subagents.get(event.subagentRunId);
        if (sub) sub.body.append(h("p", { class: "note error" }, `The sub-agent failed: ${event.message}`));
        break;
      }
      case "CUSTOM": this.custom(event); break;
      case "RUN_ERROR": this.note(`The run failed: ${event.message}`, "error"); break;
      case "RUN_FINISHED":
        if (event.outcome && event.outcome.type === "cancelled") this.note("Stopped.");
        break;
      default: break;
    }
  }

  bubble(event) {
    let bubble = this.bubbles.get(event.messageId);
    if (!bubble) {
      const md = h("div", { class: "md" });
      const el = h("div", { class: "msg assistant" }, md);
      this.where(event).append(el);
      bubble = { el, md, view: new MarkdownView(md), text: "", queued: false };
      this.bubbles.set(event.messageId, bubble);
      this.scroll();
    }
    return bubble;
  }

  paint(bubble, now = false) {
    const draw = () => {
      bubble.queued = false;
      bubble.view.update(bubble.text);  // only the reply's unsettled tail is rendered again
      this.scroll();
    };
    if (now) draw();
    else if (!bubble.queued) {
      bubble.queued = true;
      requestAnimationFrame(draw);
    }
  }

  thinking(event) {
    let found = this.reasoning.get(event.messageId);
    if (!found) {
      const text = h("div", { class: "text" });
      this.where(event).append(h("details", { class: "reasoning" }, h("summary", {}, "Reasoning"), text));
      found = { text };
      this.reasoning.set(event.messageId, found);
    }
    return found;
  }

  toolStart(event) {
    const statusEl = h("span", { class: "status running" }, "running");
    const argsBox = h("pre", {});
    const argsSlot = h("div", {}, argsBox);
    const resultSlot = h("div", {});
    const progress = h("div", { class: "progress" });
    const sub = h("div", {});
    const card = h("div", { class: "tool", "data-tool-call": event.toolCallId },
      h("div", { class: "tool-head" }, h("span", { class: "tool-name" }, event.toolCallName), statusEl),
      argsSlot, progress, resultSlot, sub);
    this.where(event).append(card);
    this.tools.set(event.toolCallId, { card, statusEl, argsBox, argsSlot, resultSlot, progress, sub, args: "" });
    this.scroll();
  }

  status(tool, state) {
    const words = { running: "running", done: "done", failed: "failed", denied: "denied", held: "waiting for approval" };
    tool.statusEl.className = `status ${state}`;
    tool.statusEl.textContent = words[state];
  }

  custom(event) {
    const value = event.value || {};
    if (event.name === "yoagent.progress" || event.name === "yoagent.tool_update") {
      const tool = this.tools.get(value.toolCallId);
      if (tool && value.text) tool.progress.textContent = value.text;
    } else if (event.name === "yoagent.spend" && !event.subagentRunId) {
      if (value.costUsd === null) this.unpriced = true;
      else this.runCost += value.costUsd;
      const share = value.contextWindow ? (100 * value.contextTokens) / value.contextWindow : 0;
      this.fill.value = Math.min(100, share);
      this.fillText.textContent = `${share.toFixed(share < 10 ? 1 : 0)}% of ${value.contextWindow.toLocaleString("en-US")} tokens`;
      this.showSpend();
    } else if (event.name === "yoagent.run_spend" && !event.subagentRunId) {
      this.runCost = 0;
      if (value.costUsd === null) this.unpriced = true;
      else this.spent += value.costUsd;
      this.showSpend();
    }
  }

  showSpend() {
    const total = this.spent + this.runCost;
    this.costText.textContent = this.unpriced ? `${dollars(total)} + unpriced` : dollars(total);
  }

  hideApprovals() {
    this.approvals.hidden = true;
    clear(this.approvalList);
  }

  async showApprovals(interrupts) {
    let calls;
    try {
      ({ calls } = await json(`api/threads/${this.threadId}/held`));
    } catch (error) {
      this.held = interrupts; // asked for again before the next prompt goes out
      this.stale = true;
      this.note(`The calls waiting for approval could not be read (${error.message}).`, "error");
      return;
    }
    const asked = new Set(interrupts.map((interrupt) => interrupt.toolCallId || interrupt.id));
    const waiting = calls.filter((call) => asked.has(call.toolCallId));
    if (!waiting.length) return;
    const answers = new Map();
    clear(this.approvalList);
    for (const call of waiting) {
      const tool = this.tools.get(call.toolCallId);
      if (tool) this.status(tool, "held");
      this.approvalList.append(this.approval(call, (payload) => {
        answers.set(call.toolCallId, payload);
        if (answers.size === waiting.length) {
          const resume = waiting.map((c) => ({ interruptId: c.toolCallId, status: "resolved", payload: answers.get(c.toolCallId) }));
          this.hideApprovals();
          this.run({ messages: this.messages, resume });
        }
      }));
    }
    this.approvals.hidden = false;
    this.scroll(true);
    const first = this.approvalList.querySelector("button");
    if (first) first.focus();
  }

  approval(call, answer) {
    const args = call.arguments || {};
    const shown = [];
    const exact = [];
    if (call.toolName === "bash" && typeof args.command === "string") {
      exact.push(args.command);
      shown.push(h("pre", { class: "command", "aria-label": "The exact command" }, visible(args.command)));
    }
    if (call.preview && call.preview.length) {
      exact.push(...call.preview);
      const kind = (line) => (line.startsWith("@@") ? "hunk" : /^\+(?!\+\+ )/.test(line) ? "add" : /^-(?!-- )/.test(line) ? "del" : "");
      shown.push(h("pre", { class: "diff", "aria-label": "What it will change" }, call.preview.map((line) => h("div", { class: kind(line) }, visible(line)))));
    } else if (call.toolName !== "bash") {
      const text = JSON.stringify(args, null, 2);
      exact.push(text);
      shown.push(h("pre", { "aria-label": "Its arguments" }, visible(text)));
    }
    const warning = exact.some(hasHidden)
      ? h("p", { class: "warning" }, "It holds control or invisible characters, shown as escapes like \\x1b.")
      : null;
    const reason = h("input", { class: "reason", type: "text", placeholder: "Why not? (the agent reads it)", "aria-label": `Reason to deny ${call.toolName}` });
    const editor = h("textarea", { "aria-label": `Edit the ${call.toolName} call`, hidden: true });
    const problem = h("p", { class: "note error", role: "alert", hidden: true });
    const card = h("div", { class: "approval", "data-call": call.toolCallId });
    const done = (payload, words) => {
      card.replaceChildren(h("p", { class: "answered" }, `${call.toolName}: ${words}`));
      answer(payload);
    };
    const allow = h("button", { type: "button", onclick: () => done({ approved: true }, "allowed") }, "Allow");
    const deny = h("button", { type: "button", class: "danger", onclick: () => done({ approved: false, reason: reason.value.trim() }, "denied") }, "Deny");
    const edited = h("button", { type: "button", hidden: true, onclick: () => {
      let changed;
      try {
        changed = call.toolName === "bash" && typeof args.command === "string" ? { ...args, command: editor.value } : JSON.parse(editor.value);
        if (typeof changed !== "object" || changed === null || Array.isArray(changed)) throw new Error("the arguments must be a JSON object");
      } catch (error) {
        problem.hidden = false;
        problem.textContent = `Not allowed yet: ${error.message}`;
        return;
      }
      done({ approved: true, arguments: changed }, "allowed, edited");
    } }, "Allow edited");
    const edit = h("button", { type: "button", class: "quiet", onclick: () => {
      editor.hidden = false;
      editor.value = call.toolName === "bash" && typeof args.command === "string" ? args.command : JSON.stringify(args, null, 2);
      edited.hidden = false;
      edit.hidden = true;
      editor.focus();
    } }, "Edit…");
    reason.addEventListener("keydown", (event) => {
      if (event.key === "Enter") { event.preventDefault(); deny.click(); }
    });
    append(card, [
      h("p", { class: "what" }, h("span", { class: "tool-name" }, call.toolName), " — ", visible(call.reason || "")),
      shown, warning, editor, problem,
      h("div", { class: "buttons" }, allow, edit, edited, reason, deny),
    ]);
    return card;
  }
}
