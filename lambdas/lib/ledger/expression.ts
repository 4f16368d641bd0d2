/**
 * A small builder for DynamoDB update and condition expressions, so every attribute name
 * goes through `ExpressionAttributeNames` (no reserved-word surprises: `status`, `version`)
 * and every value through a placeholder.
 */
export class UpdateBuilder {
  private readonly names: Record<string, string> = {};
  private readonly values: Record<string, unknown> = {};
  private readonly sets: string[] = [];
  private readonly removes: string[] = [];
  private readonly conditions: string[] = [];
  private readonly increments = new Map<string, string>();
  private counter = 0;

  /** Placeholder for an attribute name (or a dotted path of names). */
  path(...names: string[]): string {
    return names
      .map((n) => {
        const placeholder = `#${n.replace(/[^A-Za-z0-9_]/g, '_')}`;
        this.names[placeholder] = n;
        return placeholder;
      })
      .join('.');
  }

  /** Placeholder for a value. */
  value(v: unknown): string {
    const placeholder = `:v${this.counter++}`;
    this.values[placeholder] = v;
    return placeholder;
  }

  set(attribute: string, v: unknown): this {
    this.sets.push(`${this.path(attribute)} = ${this.value(v)}`);
    return this;
  }

  /** Sets a nested attribute (`['writeOwner', 'heartbeatAt']`): the map must exist. */
  setIn(names: string[], v: unknown): this {
    this.sets.push(`${this.path(...names)} = ${this.value(v)}`);
    return this;
  }

  /** `SET attribute = v` only where the attribute is missing (a first-time stamp). */
  setIfMissing(attribute: string, v: unknown): this {
    const p = this.path(attribute);
    this.sets.push(`${p} = if_not_exists(${p}, ${this.value(v)})`);
    return this;
  }

  /**
   * `SET path = path + delta`, starting from 0 when the attribute is missing. Incrementing the
   * same path again adds to the same clause (DynamoDB refuses two clauses on one path).
   */
  increment(names: string[], delta: number): this {
    const p = this.path(...names);
    const existing = this.increments.get(p);
    if (existing !== undefined) {
      this.values[existing] = (this.values[existing] as number) + delta;
      return this;
    }
    const placeholder = this.value(delta);
    this.increments.set(p, placeholder);
    this.sets.push(`${p} = if_not_exists(${p}, ${this.value(0)}) + ${placeholder}`);
    return this;
  }

  remove(attribute: string): this {
    this.removes.push(this.path(attribute));
    return this;
  }

  /** Adds a condition; all conditions must hold (AND). */
  when(condition: string): this {
    this.conditions.push(`(${condition})`);
    return this;
  }

  build(): {
    UpdateExpression: string;
    ConditionExpression?: string;
    ExpressionAttributeNames: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
  } {
    const parts: string[] = [];
    if (this.sets.length > 0) parts.push(`SET ${this.sets.join(', ')}`);
    if (this.removes.length > 0) parts.push(`REMOVE ${this.removes.join(', ')}`);
    return {
      UpdateExpression: parts.join(' '),
      ...(this.conditions.length > 0 ? { ConditionExpression: this.conditions.join(' AND ') } : {}),
      ExpressionAttributeNames: this.names,
      ...(Object.keys(this.values).length > 0 ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}
