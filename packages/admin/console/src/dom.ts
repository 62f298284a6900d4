/**
 * Building the page with the DOM's own calls: text goes in as text (textContent), never as HTML, so
 * nothing an account name or an event holds can become markup or script.
 */
type Child = Node | string | null | undefined | false;

export function element<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value);
  for (const child of children) if (child !== null && child !== undefined && child !== false) made.append(child);
  return made;
}

/** A button that runs `action` when pressed (by click, Enter or Space: a real button). */
export function button(label: string, action: () => void | Promise<void>, attributes: Record<string, string> = {}): HTMLButtonElement {
  const made = element('button', { type: 'button', ...attributes }, label);
  made.addEventListener('click', () => void run(made, action));
  return made;
}

/** A labelled field: the label names the input for screen readers and is clicked to focus it. */
export function field(label: string, input: HTMLInputElement | HTMLSelectElement, hint?: string): HTMLDivElement {
  const id = input.id || `field-${(fieldCount += 1)}`;
  input.id = id;
  const hintId = `${id}-hint`;
  if (hint) input.setAttribute('aria-describedby', hintId);
  return element('div', { class: 'field' }, element('label', { for: id }, label), input, hint ? element('p', { class: 'hint', id: hintId }, hint) : null);
}
let fieldCount = 0;

export function input(attributes: Record<string, string> = {}): HTMLInputElement {
  return element('input', { type: 'text', ...attributes });
}

/** A form whose submit (the button, or Enter in a field) runs `action` without leaving the page. */
export function form(label: string, action: (form: HTMLFormElement) => void | Promise<void>, ...children: Child[]): HTMLFormElement {
  const made = element('form', { 'aria-label': label }, ...children);
  made.addEventListener('submit', (event) => {
    event.preventDefault();
    const submit = made.querySelector<HTMLButtonElement>('button[type=submit]');
    void run(submit, () => action(made));
  });
  return made;
}

export function table(caption: string, headings: readonly string[], rows: readonly (readonly Child[])[]): HTMLTableElement {
  return element(
    'table',
    {},
    element('caption', {}, caption),
    element('thead', {}, element('tr', {}, ...headings.map((heading) => element('th', { scope: 'col' }, heading)))),
    element('tbody', {}, ...rows.map((cells) => element('tr', {}, ...cells.map((cell) => element('td', {}, cell))))),
  );
}

/** Says something to the user where a screen reader reads it (a polite live region). */
export function announce(message: string, kind: 'info' | 'error' = 'info'): void {
  const status = document.getElementById('status');
  if (!status) return;
  status.className = message === '' ? 'status' : `status ${kind}`;
  status.textContent = message;
}

/** Replaces the main region's content with a page: its heading takes the focus, so a keyboard user starts there. */
export function showPage(title: string, ...children: Child[]): HTMLElement {
  const main = document.getElementById('main')!;
  const heading = element('h1', { tabindex: '-1' }, title);
  main.replaceChildren(heading, ...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false));
  document.title = `${title} · Tessera admin console`;
  heading.focus();
  return main;
}

/** An ISO time as the user's locale shows it, with the ISO form in a tooltip; '-' for none. */
export function time(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return '-';
  return element('time', { datetime: iso, title: iso }, new Date(iso).toLocaleString());
}

/** Runs an action with its control disabled meanwhile; a failure is announced, not thrown away. */
async function run(control: HTMLButtonElement | null, action: () => void | Promise<void>): Promise<void> {
  if (control) control.disabled = true;
  try {
    await action();
  } catch (error) {
    announce(error instanceof Error ? error.message : String(error), 'error');
  } finally {
    if (control) control.disabled = false;
  }
}
