// A few DOM helpers: `h` builds elements, `clear` empties one.

export type Child = Node | string | number | null | undefined | false | Child[];

type Props = {
  [key: string]: unknown;
};

/**
 * `h('button', {class: 'x', onclick: f, 'aria-label': 'y'}, 'text', child)`: attributes by
 * name, `on<event>` functions as listeners, `dataset` as an object, `value`/`checked`/
 * `disabled`/`hidden` as properties. null, undefined and false are left out.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2), value as EventListener);
      } else if (key === 'dataset') {
        Object.assign(el.dataset, value);
      } else if (key === 'value' || key === 'checked' || key === 'disabled' || key === 'hidden' || key === 'selected') {
        (el as unknown as Record<string, unknown>)[key] = value;
      } else if (key === 'class') {
        el.className = String(value);
      } else {
        el.setAttribute(key, value === true ? '' : String(value));
      }
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  clear(el);
  append(el, children);
}
