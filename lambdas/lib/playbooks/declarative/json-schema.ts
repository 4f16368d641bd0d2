/**
 * The JSON Schema of the declarative form, for editors (`# yaml-language-server: $schema=...`,
 * VS Code's `json.schemas`). Generated from the zod schema the loader checks with, so the two
 * cannot drift; `playbooks/playbook.schema.json` is this, written by `npm run playbook -- schema`
 * (a unit test checks the file is current).
 */
import { z } from 'zod';
import { DeclarativePlaybookSchema } from './schema.ts';

/** The declarative form as JSON Schema (draft 2020-12). */
export function declarativeJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(DeclarativePlaybookSchema, { unrepresentable: 'any', io: 'input' }) as Record<
    string,
    unknown
  >;
  return {
    ...schema,
    $id: 'https://github.com/belay/belay/playbooks/playbook.schema.json',
    title: 'Belay declarative playbook (*.playbook.yaml / *.playbook.json)',
  };
}
