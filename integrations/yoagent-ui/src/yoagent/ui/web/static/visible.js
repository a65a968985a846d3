// Text a person approves, shown exactly: every control, format, private-use, unassigned or
// line-separator character (but the newline) as a visible escape — \t, \r, \x1b, \u202e —
// the rule of the terminal agent's confirmations (yoagent-cli's safe_text, strict mode).

const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u;
const NAMED = { "\t": "\\t", "\r": "\\r", "\n": "\\n" };

/** The visible form of one character. */
export function escapeChar(char) {
  if (NAMED[char]) return NAMED[char];
  const code = char.codePointAt(0);
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\U${code.toString(16).padStart(8, "0")}`;
}

function hidden(char) {
  return char !== "\n" && HIDDEN.test(char);
}

/** Whether `text` holds a character shown as an escape. */
export function hasHidden(text) {
  for (const char of text) if (hidden(char)) return true;
  return false;
}

/** `text` as nodes: plain runs as text, each escape in a marked span. */
export function visible(text) {
  const out = document.createDocumentFragment();
  let plain = "";
  for (const char of String(text)) {
    if (hidden(char)) {
      if (plain) out.append(plain);
      plain = "";
      const mark = document.createElement("span");
      mark.className = "esc";
      mark.textContent = escapeChar(char);
      mark.title = `hidden character U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
      out.append(mark);
    } else {
      plain += char;
    }
  }
  if (plain) out.append(plain);
  return out;
}
