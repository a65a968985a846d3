// Building the page: elements from data, text always as text (never parsed as HTML).

/** An element `tag` with `attrs` (properties, `class`, `data-*`/`aria-*` attributes, `on*`
 * listeners) and `children` (nodes or strings, which become text). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "role" || key === "for") el.setAttribute(key, value === true ? "" : String(value));
    else el[key] = value;
  }
  append(el, children);
  return el;
}

/** Append `children` (nested arrays, nodes, strings; null skipped) to `el`. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Remove every child of `el`. */
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/** Dollars for people: `$0.0123`; `unpriced` when the price is unknown. */
export function dollars(value) {
  if (value === null || value === undefined) return "unpriced";
  if (value === 0) return "$0.0000";
  return value < 0.01 ? `$${value.toFixed(6)}` : `$${value.toFixed(4)}`;
}

/** A token count for people: `1,234`. */
export function count(value) {
  return Number(value || 0).toLocaleString("en-US");
}

/** A duration for people: `850 ms`, `12.3 s`, `4 min 05 s`. */
export function duration(ms) {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60000);
  return `${minutes} min ${String(Math.round((ms % 60000) / 1000)).padStart(2, "0")} s`;
}

/** A time of day (or date and time, when not today) for people. */
export function when(ms) {
  if (!ms) return "—";
  const date = new Date(ms);
  const today = new Date().toDateString() === date.toDateString();
  return today ? date.toLocaleTimeString() : date.toLocaleString();
}
