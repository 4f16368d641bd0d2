/** Where `belay` writes: results to `out` (what `--json` and scripts read), progress and errors to `err`. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Is `err` a terminal (a live progress bar), or a pipe (one line per change)? */
  isTTY: boolean;
  /** Reads standard input to its end (a key or password given with `-`). */
  stdin(): Promise<string>;
}

export function processIo(): Io {
  return {
    out: (t) => process.stdout.write(`${t}\n`),
    err: (t) => process.stderr.write(`${t}\n`),
    isTTY: Boolean(process.stderr.isTTY),
    stdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8').trim();
    },
  };
}

/** Columns padded to their widest cell. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const r of rows) {
    r.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, c.length);
    });
  }
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  '))
    .join('\n');
}
