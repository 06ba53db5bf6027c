/** graphql-js recurses on nesting: a document nested past the limit fails to parse instead of overflowing the stack. */
import { GraphQLError, Lexer, Source, TokenKind } from 'graphql';
import type { Plugin } from 'graphql-yoga';

type NestingLimits = { readonly maxNesting: number; readonly maxTokens: number };

const BRACE_L = 0x7b;
const BRACKET_L = 0x5b;
const PAREN_L = 0x28;

function moreOpeningBrackets(body: string, count: number): boolean {
  let found = 0;
  for (let i = 0; i < body.length; i++) {
    const code = body.charCodeAt(i);
    if ((code === BRACE_L || code === BRACKET_L || code === PAREN_L) && ++found > count) return true;
  }
  return false;
}

export function nestedTooDeeply(source: string | Source, { maxNesting, maxTokens }: NestingLimits): boolean {
  // Most documents have fewer brackets in all (strings and comments included) than the limit: a scan, no lexing.
  if (!moreOpeningBrackets(typeof source === 'string' ? source : source.body, maxNesting)) return false;
  const lexer = new Lexer(typeof source === 'string' ? new Source(source) : source);
  let depth = 0;
  try {
    for (let tokens = 0, token = lexer.advance(); token.kind !== TokenKind.EOF && tokens < maxTokens; token = lexer.advance(), tokens++) {
      const kind = token.kind;
      if (kind === TokenKind.BRACE_L || kind === TokenKind.BRACKET_L || kind === TokenKind.PAREN_L) {
        if (++depth > maxNesting) return true;
      } else if (kind === TokenKind.BRACE_R || kind === TokenKind.BRACKET_R || kind === TokenKind.PAREN_R) {
        depth--;
      }
    }
  } catch {
    // A lexical error: the parser stops there too, and reports it with its location.
  }
  return false;
}

/** Goes after every plugin that sets the parse function (graphql-armor's token limit): it wraps the one set. */
export function useNestingLimit(limits: NestingLimits): Plugin {
  const tooDeep = () => new GraphQLError(`Syntax Error: The document is nested too deeply (more than ${limits.maxNesting} levels).`);
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        if (nestedTooDeeply(source, limits)) throw tooDeep();
        return parseFn(source, options);
      });
    },
  };
}
