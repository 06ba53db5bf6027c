/** An edge of an audit page. */
import type { AuditRecord } from '../../upstream/identity/schemas.js';

export interface AuditEdge {
  readonly cursor: string;
  readonly node: AuditRecord;
}

/**
 * The cursor is encoded when a client selects it: a dashboard listing 5000 records rarely asks
 * for each edge's cursor, and pageInfo's cursors are encoded on their own.
 */
export class PositionedEdge implements AuditEdge {
  constructor(
    readonly node: AuditRecord,
    private readonly position: number,
    private readonly cursorAt: (position: number) => string,
  ) {}

  get cursor(): string {
    return this.cursorAt(this.position);
  }
}
