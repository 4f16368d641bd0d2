/**
 * Reading what a form would submit, for a write approved on its effect (`approve: 'effect'`):
 * every field a person sees in the form the commit button belongs to, with its value as the page
 * holds it (a password field marked secret; hidden fields, such as a nonce or an id the page makes
 * at each load, left out), and texts the step names (an amount the site computed).
 * A commit with no element (a goto) has no form: its effect is the texts alone.
 */
import type { Locator } from 'playwright-core';
import type { Effect, EffectField } from './contract.ts';

/** A control of the form, as the page holds it. */
interface Control {
  name: string;
  value: string;
  secret: boolean;
}

/**
 * The fields of the form `commit` belongs to (name, value; a checkbox or radio as checked or
 * not; a select as its chosen option's text), then `shows` (a name for people -> the element
 * whose text is part of what is approved). Without a form around `commit`, only `shows`.
 *
 * @example
 * effectOf: (page) => formEffect(page.getByRole('button', { name: 'Send' }), {
 *   Amount: page.getByTestId('amount'),
 * }),
 */
export async function formEffect(
  commit: Locator | undefined,
  shows: Readonly<Record<string, Locator>> = {},
): Promise<Effect> {
  const controls = commit ? await formControls(commit) : [];
  const fields: EffectField[] = controls.map((c) => ({
    name: c.name,
    value: c.value,
    ...(c.secret ? { secret: true as const } : {}),
  }));
  for (const [name, el] of Object.entries(shows)) {
    const text = await el
      .first()
      .textContent({ timeout: 1_000 })
      .catch(() => null);
    fields.push({ name, value: text?.replace(/\s+/g, ' ').trim() ?? '(not on the page)' });
  }
  return { fields };
}

/** The controls of the form `commit` belongs to (none without a form). */
function formControls(commit: Locator): Promise<Control[]> {
  return commit
    .first()
    .evaluate((el) => {
      const form = (el as HTMLButtonElement).form ?? el.closest('form');
      if (!form) return [];
      const out: { name: string; value: string; secret: boolean }[] = [];
      for (const c of Array.from(form.elements)) {
        if (
          !(c instanceof HTMLInputElement) &&
          !(c instanceof HTMLSelectElement) &&
          !(c instanceof HTMLTextAreaElement)
        )
          continue;
        const type = c instanceof HTMLInputElement ? c.type : c.tagName.toLowerCase();
        // Hidden fields (nonces, ids the page makes at each load) are no part of what a person approves.
        if (['submit', 'button', 'reset', 'image', 'file', 'hidden'].includes(type)) continue;
        const label = c.labels?.[0]?.textContent?.replace(/\s+/g, ' ').trim();
        const name = c.name || c.id || label || type;
        let value: string;
        if (c instanceof HTMLInputElement && (type === 'checkbox' || type === 'radio')) {
          if (type === 'radio' && !c.checked) continue;
          value = type === 'radio' ? c.value : c.checked ? 'checked' : 'not checked';
        } else if (c instanceof HTMLSelectElement) {
          value = Array.from(c.selectedOptions)
            .map((o) => o.textContent?.trim() ?? o.value)
            .join(', ');
        } else value = c.value;
        out.push({
          name: label ? `${label} (${name})` : name,
          value,
          secret: type === 'password',
        });
      }
      return out;
    })
    .catch((): Control[] => []);
}
