/** How playbook files are named in messages. */
import { relative } from 'node:path';
import { REPO_ROOT } from './repo.ts';

/** A file's name for messages: repository-relative inside the repository, else absolute. */
export function displayPath(file: string): string {
  const rel = relative(REPO_ROOT, file);
  return rel.startsWith('..') ? file : rel;
}
