/**
 * The declarative form's reference page, written from its JSON Schema
 * (`playbooks/playbook.schema.json`, itself generated from the zod schema the loader checks with):
 * every field with its type, whether it is required, its rule (pattern, range, choices) and its
 * description, one section per object, one per form of a union (a step form, an action), so
 * the page cannot say other than what a playbook file is checked against.
 */

/** A JSON Schema node, as far as this page reads one. */
interface Node {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Node>;
  required?: string[];
  additionalProperties?: boolean | Node;
  propertyNames?: Node;
  items?: Node;
  anyOf?: Node[];
  oneOf?: Node[];
  allOf?: Node[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  $ref?: string;
  $defs?: Record<string, Node>;
  title?: string;
}

import { ACTION_KEYS, STEP_FORM_KEYS } from '../../lambdas/lib/playbooks/declarative/schema.ts';

/** Names for the shared definitions (`$defs`) the generator numbers. */
const DEF_NAMES: Record<string, string> = { __schema0: 'Target' };

interface Section {
  title: string;
  node: Node;
  intro?: string;
}

function defName(ref: string): string {
  const key = ref.replace('#/$defs/', '');
  return DEF_NAMES[key] ?? key;
}

function anchorOf(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9\s-]/g, '')
    .trim()
    .replace(/\s+/g, '-');
}

/** An object's properties, with `allOf` parts merged (zod's intersections). */
function merged(node: Node): Node {
  if (!node.allOf) return node;
  const parts = node.allOf.map(merged);
  const objectPart = parts.find((p) => p.properties);
  const props: Record<string, Node> = {};
  const required: string[] = [];
  for (const p of parts) {
    Object.assign(props, p.properties ?? {});
    required.push(...(p.required ?? []));
  }
  const unions = parts.filter((p) => p.anyOf);
  if (unions.length > 0 && !objectPart) return { ...node, allOf: undefined, anyOf: unions[0]?.anyOf };
  // A union of reads intersected with an object: each form of the union gets the object's fields.
  if (unions[0]?.anyOf)
    return {
      description: node.description,
      anyOf: unions[0].anyOf.map((form) => ({
        ...form,
        properties: { ...(form.properties ?? {}), ...props },
        required: [...(form.required ?? []), ...required],
      })),
    };
  return { ...node, allOf: undefined, type: 'object', properties: props, required };
}

function isObject(node: Node): boolean {
  const n = merged(node);
  return n.properties !== undefined || (n.type === 'object' && typeof n.additionalProperties === 'object');
}

function variants(node: Node): Node[] | undefined {
  const n = merged(node);
  return n.anyOf ?? n.oneOf;
}

/** Keys that name a form of a union, most telling first (a step's form, an action, a probe's, a read's). */
const FORM_KEYS: readonly string[] = [
  ...STEP_FORM_KEYS,
  ...ACTION_KEYS,
  'records',
  'checks',
  'path',
  'target',
  'url',
  'const',
  'template',
];

/** The key that tells a form of a union apart: a property only it has (a known form key first). */
function formKey(forms: readonly Node[], form: Node): string | undefined {
  const own = Object.keys(form.properties ?? {});
  const others = forms.filter((f) => f !== form).map((f) => new Set(Object.keys(f.properties ?? {})));
  const unique = (k: string): boolean => own.includes(k) && others.every((o) => !o.has(k));
  return FORM_KEYS.find(unique) ?? [...(form.required ?? []), ...own].find(unique);
}

/** Structurally equal nodes (zod inlines a shared schema at every use) are described once. */
function shapeOf(node: Node): string {
  return JSON.stringify(node);
}

/** The type of a field, in a few words, with links to the sections that describe it. */
function typeOf(node: Node, here: string, nested: Map<string, string>): string {
  if (node.$ref) return `[${defName(node.$ref)}](#${anchorOf(defName(node.$ref))})`;
  const linked = nested.get(shapeOf(node));
  if (linked) return linked === here ? 'object' : `[${linked}](#${anchorOf(linked)})`;
  const n = merged(node);
  if (n.const !== undefined) return `\`${JSON.stringify(n.const)}\``;
  if (n.enum) return n.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  const forms = variants(n);
  if (forms) return forms.map((f) => typeOf(f, here, nested)).join(' or ');
  if (n.type === 'array' && n.items) return `list of ${typeOf(n.items, here, nested)}`;
  if (n.type === 'object' && n.additionalProperties && typeof n.additionalProperties === 'object') {
    const value = n.additionalProperties;
    const empty = Object.keys(value).length === 0;
    return empty ? 'object (any fields)' : `map of name to ${typeOf(value, here, nested)}`;
  }
  if (Array.isArray(n.type)) return n.type.join(' or ');
  return n.type ?? 'any';
}

function rule(node: Node): string {
  const n = merged(node);
  const parts: string[] = [];
  if (n.pattern) parts.push(`matches \`${n.pattern.replace(/\|/g, '\\|')}\``);
  if (n.minimum !== undefined && n.maximum !== undefined && n.maximum < 1e15)
    parts.push(`${n.minimum} to ${n.maximum}`);
  else if (n.minimum !== undefined) parts.push(`at least ${n.minimum}`);
  if (n.minLength) parts.push(`not empty`);
  if (n.minItems) parts.push(`at least ${n.minItems}`);
  if (n.propertyNames?.pattern) parts.push(`names match \`${n.propertyNames.pattern}\``);
  return parts.join('; ');
}

/** Text for a table cell: pipes escaped, angle brackets as entities (`<step>` is no HTML tag). */
function cell(text: string | undefined): string {
  return (text ?? '').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\n/g, ' ');
}

/**
 * Walks the schema into sections: one per object that has fields, one per form of a union of
 * objects. Returns them in reading order with the title each object node is shown under.
 */
function collect(root: Node): { sections: Section[]; nested: Map<string, string> } {
  const sections: Section[] = [];
  const nested = new Map<string, string>();
  const visit = (node: Node, title: string, intro?: string): void => {
    if (node.$ref || nested.has(shapeOf(node))) return;
    const n = merged(node);
    const forms = variants(n);
    if (forms?.some((f) => isObject(f))) {
      nested.set(shapeOf(node), title);
      const objects = forms.filter((f) => isObject(f));
      const plain = forms.filter((f) => !isObject(f));
      // A form described already (zod repeats shared schemas) links to where it is described.
      const formTitles = objects.map((f, i) => {
        const seen = nested.get(shapeOf(f));
        if (seen) return seen;
        const key = formKey(objects, merged(f));
        return `${title}: ${key ? `the \`${key}\` form` : `form ${i + 1}`}`;
      });
      sections.push({
        title,
        node: n,
        intro: [
          n.description,
          `One of: ${[
            ...plain.map((p) => typeOf(p, title, nested)),
            ...formTitles.map(
              (t) => `[${t.startsWith(`${title}: `) ? t.slice(title.length + 2) : t}](#${anchorOf(t)})`,
            ),
          ].join(', ')}.`,
        ]
          .filter(Boolean)
          .join(' '),
      });
      objects.forEach((f, i) => {
        visit(f, formTitles[i] as string);
      });
      return;
    }
    if (n.type === 'array' && n.items) {
      visit(n.items, title, intro ?? n.description);
      const items = nested.get(shapeOf(n.items));
      if (items && !nested.has(shapeOf(node))) nested.set(shapeOf(node), items);
      return;
    }
    if (n.type === 'object' && !n.properties && typeof n.additionalProperties === 'object') {
      visit(n.additionalProperties, title, intro ?? n.description);
      return;
    }
    if (!n.properties) return;
    nested.set(shapeOf(node), title);
    sections.push({ title, node: n, ...(intro || n.description ? { intro: intro ?? n.description } : {}) });
    for (const [name, child] of Object.entries(n.properties)) {
      const c = merged(child);
      const grand = c.type === 'array' ? c.items : c;
      if (grand && !grand.$ref && (isObject(grand) || variants(grand)?.some((f) => isObject(f))))
        visit(child, `${title === 'The file' ? '' : `${title} › `}${name}`);
    }
  };
  visit(root, 'The file');
  for (const [key, def] of Object.entries(root.$defs ?? {})) visit(def, DEF_NAMES[key] ?? key);
  return { sections, nested };
}

function table(section: Section, nested: Map<string, string>): string {
  const n = section.node;
  if (!n.properties) return '';
  const required = new Set(n.required ?? []);
  const rows = Object.entries(n.properties).map(
    ([name, child]) =>
      `| \`${name}\` | ${typeOf(child, section.title, nested)} | ${required.has(name) ? 'yes' : ''} | ${cell(rule(child))} | ${cell(child.description ?? merged(child).description)} |`,
  );
  return ['| field | type | required | rule | what |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** The reference page, as Markdown, for the schema `schema` found at `source`. */
export function schemaPage(schema: Record<string, unknown>, source: string): string {
  const { sections, nested } = collect(schema as Node);
  const out = [
    '# Declarative playbook schema',
    '',
    `<!-- Generated by \`npm run docs:gen\` from ${source}: do not edit. -->`,
    '',
    `Every field a \`*.playbook.yaml\` or \`*.playbook.json\` file may hold, generated from \`${source}\`, the JSON Schema the loader's zod schema produces (\`npm run playbook -- schema\`). A field's type links to the section that describes it. The rules the schema cannot say (a write has a probe, references name inputs the schema has and earlier steps, secrets only in fill values) are in [the declarative form](/guides/declarative).`,
    '',
    // The descriptions hold `{{references}}`: the page is no Vue template.
    '<div v-pre>',
    '',
  ];
  for (const s of sections) {
    out.push(`## ${s.title} {#${anchorOf(s.title)}}`, '');
    if (s.intro) out.push(cell(s.intro), '');
    const t = table(s, nested);
    if (t) out.push(t, '');
  }
  out.push('</div>');
  return `${out.join('\n').trimEnd()}\n`;
}
