/**
 * What a private WordPress stored, read straight from its MariaDB database (`wp_posts`) with an
 * account that may only read it: the tests count records there, not what a page shows.
 *
 * Values are compared byte for byte (`BINARY`): the table's collation would call "Draft" and
 * "draft " the same title.
 */
import { type Connection, createConnection, type RowDataPacket } from 'mysql2/promise';

/** Which posts to count: every filter given must hold. */
export interface PostFilter {
  /** `post_type` (default `post`: not pages, revisions, menu items). */
  type?: string;
  /** `post_status`: `draft`, `publish`, `auto-draft` (an unsaved Quick Draft form), `trash`, ... */
  status?: string;
  /** The exact title. */
  title?: string;
  /** A substring of the content (case-sensitive). */
  contentContains?: string;
}

/** One post as stored. */
export interface StoredPost {
  id: number;
  type: string;
  status: string;
  title: string;
  /** The author's user id. */
  authorId: number;
}

/** Reads a WordPress database. */
export interface WordPressPosts {
  /** How many posts match (`type` defaults to `post`). */
  count(filter?: PostFilter): Promise<number>;
  /** The matching posts, oldest first (`type` defaults to `post`). */
  list(filter?: PostFilter): Promise<StoredPost[]>;
  /** Closes the connection (a later call opens another). */
  close(): Promise<void>;
}

/** Where the database is and the read-only account to use. */
export interface PostsConnection {
  port: number;
  database: string;
  user: string;
  password: string;
}

/** The WHERE clause of a filter and its parameters (values never spliced into the SQL). */
export function postsWhere(filter: PostFilter = {}): { sql: string; params: string[] } {
  const clauses = ['post_type = ?'];
  const params = [filter.type ?? 'post'];
  if (filter.status !== undefined) {
    clauses.push('post_status = ?');
    params.push(filter.status);
  }
  if (filter.title !== undefined) {
    clauses.push('BINARY post_title = BINARY ?');
    params.push(filter.title);
  }
  if (filter.contentContains !== undefined) {
    clauses.push('LOCATE(BINARY ?, BINARY post_content) > 0');
    params.push(filter.contentContains);
  }
  return { sql: clauses.join(' AND '), params };
}

/**
 * A reader of the `wp_posts` table over TCP on 127.0.0.1.
 *
 * @example
 * const posts = wordpressPosts({ port, database: 'wordpress', user: 'belay_reader', password });
 * await posts.count({ status: 'draft', title: 'Launch notes' }); // 1
 * await posts.close();
 */
export function wordpressPosts(conn: PostsConnection): WordPressPosts {
  let open: Promise<Connection> | undefined;
  const connection = (): Promise<Connection> => {
    open ??= createConnection({
      host: '127.0.0.1',
      port: conn.port,
      user: conn.user,
      password: conn.password,
      database: conn.database,
      connectTimeout: 10_000,
    }).catch((err: unknown) => {
      open = undefined;
      throw err;
    });
    return open;
  };
  return {
    async count(filter) {
      const { sql, params } = postsWhere(filter);
      const [rows] = await (await connection()).execute<RowDataPacket[]>(
        `SELECT COUNT(*) AS n FROM wp_posts WHERE ${sql}`,
        params,
      );
      return Number(rows[0]?.n ?? 0);
    },
    async list(filter) {
      const { sql, params } = postsWhere(filter);
      const [rows] = await (await connection()).execute<RowDataPacket[]>(
        `SELECT ID, post_type, post_status, post_title, post_author FROM wp_posts WHERE ${sql} ORDER BY ID`,
        params,
      );
      return rows.map((r) => ({
        id: Number(r.ID),
        type: String(r.post_type),
        status: String(r.post_status),
        title: String(r.post_title),
        authorId: Number(r.post_author),
      }));
    },
    async close() {
      const was = open;
      open = undefined;
      if (was) await (await was.catch(() => undefined))?.end().catch(() => undefined);
    },
  };
}
