import { announce, button, element } from './dom.js';

/**
 * A secret shown once, as the admin API answers it once: in a read-only field with a copy button,
 * until the user says it is stored. Nothing keeps it after that (not the page, not the browser's storage).
 */
export function secretPanel(title: string, lines: readonly (readonly [string, string])[], secret: readonly [string, string]): HTMLElement {
  const [secretLabel, secretValue] = secret;
  const secretField = element('input', { type: 'text', readonly: '', value: secretValue, id: 'shown-secret', class: 'secret', spellcheck: 'false', autocomplete: 'off' });
  const panel = element(
    'section',
    { class: 'secret-panel', 'aria-labelledby': 'secret-title' },
    element('h2', { id: 'secret-title' }, title),
    element('p', {}, 'Shown this once: copy it now and keep it where your secrets live. Tessera stores only its hash.'),
    element('dl', {}, ...lines.flatMap(([label, value]) => [element('dt', {}, label), element('dd', {}, element('code', {}, value))])),
    element('div', { class: 'field' }, element('label', { for: 'shown-secret' }, secretLabel), secretField),
    button(`Copy ${secretLabel.toLowerCase()}`, async () => {
      await navigator.clipboard.writeText(secretValue);
      announce(`${secretLabel} copied.`);
    }),
    ' ',
    button('Stored it: hide', () => {
      secretField.value = '';
      panel.remove();
      announce(`${secretLabel} hidden; it cannot be shown again.`);
    }),
  );
  return panel;
}
