// Just enough DOM for the page's Markdown renderer to run in Node: elements, text nodes and
// fragments, serialized as HTML (text escaped) to compare what was rendered.

export class Node {
  constructor() {
    this.parentNode = null;
    this.childNodes = [];
  }

  append(...children) {
    for (const child of children) this.insertBefore(typeof child === "string" ? new Text(child) : child, null);
  }

  insertBefore(node, ref) {
    const moved = node instanceof Fragment ? [...node.childNodes] : [node];
    if (node instanceof Fragment) node.childNodes = [];
    for (const child of moved) {
      if (child.parentNode) child.remove();
      child.parentNode = this;
      const at = ref === null || ref === undefined ? -1 : this.childNodes.indexOf(ref);
      if (ref && at < 0) throw new Error("insertBefore: the reference is not a child");
      if (at < 0) this.childNodes.push(child);
      else this.childNodes.splice(at, 0, child);
    }
    return node;
  }

  replaceChildren(...children) {
    for (const child of [...this.childNodes]) child.remove();
    this.append(...children);
  }

  remove() {
    if (!this.parentNode) return;
    const siblings = this.parentNode.childNodes;
    siblings.splice(siblings.indexOf(this), 1);
    this.parentNode = null;
  }

  get html() {
    return this.childNodes.map((child) => child.html).join("");
  }
}

const escape = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

class Text extends Node {
  constructor(text) {
    super();
    this.text = String(text);
  }

  get html() {
    return escape(this.text);
  }
}

class Fragment extends Node {}

class Element extends Node {
  constructor(tag) {
    super();
    this.tag = tag;
    this.attributes = {};
    this.dataset = {};
    this.className = "";
  }

  setAttribute(key, value) {
    this.attributes[key] = String(value);
  }

  addEventListener() {}

  get html() {
    const attrs = { ...this.attributes };
    for (const key of ["href", "target", "rel", "start"]) if (this[key] !== undefined) attrs[key] = this[key];
    for (const [key, value] of Object.entries(this.dataset)) attrs[`data-${key}`] = value;
    if (this.className) attrs.class = this.className;
    const shown = Object.keys(attrs).sort().map((key) => ` ${key}="${escape(String(attrs[key]))}"`).join("");
    return `<${this.tag}${shown}>${super.html}</${this.tag}>`;
  }
}

globalThis.Node = Node;
globalThis.document = {
  createElement: (tag) => new Element(tag),
  createTextNode: (text) => new Text(text),
  createDocumentFragment: () => new Fragment(),
};

export const html = (node) => node.html;
export const element = (tag) => new Element(tag);
export const inner = (node) => node.childNodes.map((child) => child.html).join("");
