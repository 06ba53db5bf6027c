/** The hostile-caller properties, run by the in-process suite and, at full size, by the soak suite. */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { document, mangledDocument, representations, variables } from './arbitraries.js';
import { expectContractAnswer, type Answer } from './contract-answer.js';

export interface PropertyRuns {
  readonly documents: number;
  readonly variables: number;
  readonly representations: number;
}

const ENTITIES_QUERY = 'query ($r: [_Any!]!) { _entities(representations: $r) { __typename ... on UpdateSession { id files { name } } } }';

/** Declares the three properties as tests; `post` sends one GraphQL request and returns its answer. */
export function contractProperties(post: (payload: unknown) => Promise<Answer>, runs: PropertyRuns): void {
  it('documents: every answer carries contract codes', async () => {
    await fc.assert(
      fc.asyncProperty(mangledDocument, async (query) => {
        expectContractAnswer(await post({ query }), query);
      }),
      { numRuns: runs.documents },
    );
  });

  it('documents with variables of any shape', async () => {
    await fc.assert(
      fc.asyncProperty(document, variables, async (query, vars) => {
        expectContractAnswer(await post({ query, variables: vars }), { query, vars });
      }),
      { numRuns: runs.variables },
    );
  });

  it('_entities representations: items settle on their own', async () => {
    await fc.assert(
      fc.asyncProperty(representations, async (r) => {
        const answer = await post({ query: ENTITIES_QUERY, variables: { r } });
        expectContractAnswer(answer, r);
        // Whenever the list coerces and is within the cap, there is one item per representation.
        const coerces = r.every((item) => item !== null);
        const entities = (answer.body.data as { _entities?: unknown[] } | null | undefined)?._entities;
        if (coerces && r.length <= 100) expect(entities, JSON.stringify(r).slice(0, 500)).toHaveLength(r.length);
      }),
      { numRuns: runs.representations },
    );
  });
}
