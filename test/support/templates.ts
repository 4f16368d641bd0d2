/** Synthesized templates for tests of the local stack's IAM enforcement, and edited copies of them. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { logicalIdOf, readTemplate, resourcesOfType } from '../../local/iam/template.ts';

/**
 * Writes a copy of `file` into `dir` in which the role of function `constructId` no longer
 * allows `action` (removed from every statement of the policies attached to the role), and
 * returns the copy's path.
 */
export function templateWithout(file: string, dir: string, constructId: string, action: string): string {
  const template = readTemplate(file);
  const fnId = logicalIdOf(template, 'AWS::Lambda::Function', constructId);
  if (!fnId) throw new Error(`no function ${constructId} in ${file}`);
  const roleRef = template.Resources[fnId]?.Properties?.Role as { 'Fn::GetAtt': [string] } | undefined;
  const role = roleRef?.['Fn::GetAtt'][0];
  if (!role) throw new Error(`function ${constructId} has no role in ${file}`);
  let removed = 0;
  for (const id of resourcesOfType(template, 'AWS::IAM::Policy')) {
    const props = template.Resources[id]?.Properties as {
      Roles: unknown[];
      PolicyDocument: { Statement: { Action: string | string[] }[] };
    };
    if (!props.Roles.some((r) => JSON.stringify(r) === JSON.stringify({ Ref: role }))) continue;
    for (const statement of props.PolicyDocument.Statement) {
      const actions = [statement.Action].flat();
      const kept = actions.filter((a) => a !== action);
      removed += actions.length - kept.length;
      statement.Action = kept.length === 1 ? (kept[0] as string) : kept;
    }
  }
  if (removed === 0) throw new Error(`${constructId}'s role does not allow ${action} in ${file}`);
  const copy = join(dir, `without-${constructId}-${action.replace(/\W/g, '-')}.template.json`);
  writeFileSync(copy, JSON.stringify(template));
  return copy;
}

/** The template as JSON text (for assertions on what it grants). */
export function templateText(file: string): string {
  return readFileSync(file, 'utf8');
}
