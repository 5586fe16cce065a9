import { type FragmentDefinitionNode, type FragmentSpreadNode, Kind, parse, visit } from 'graphql';

/**
 * A GraphQL document with every named fragment written in place: each `...Name` spread becomes
 * `... on Type { … }` (the fragment's own text, indented to the spread's column, its spreads expanded
 * in turn) and the fragment definitions go, with the comment lines just above them. Everything else
 * (operations, comments, blank lines, formatting) is kept byte for byte.
 *
 * Why: src/client/operations.graphql writes shared selections once as fragments (for codegen and the
 * trusted-documents manifest), but GraphiQL sends the selected operation with every fragment of the
 * editor's document, so an operation that uses none of them fails `NoUnusedFragments`. The editor
 * therefore opens on this self-contained form. graphql-js's `print` would inline as well but drop
 * every comment the document explains itself with.
 *
 * @param text a document of operations and fragment definitions.
 * @throws GraphQLError when `text` does not parse; Error when a spread names no fragment of `text`,
 *   carries directives, or fragments spread each other in a cycle.
 */
export function inlineFragments(text: string): string {
  const document = parse(text);
  const fragments = new Map<string, FragmentDefinitionNode>();
  const spreads: FragmentSpreadNode[] = [];
  visit(document, {
    FragmentDefinition: (node) => {
      fragments.set(node.name.value, node);
    },
    FragmentSpread: (node) => {
      spreads.push(node);
    },
  });

  /** `text[start, end)` with the spreads inside it expanded; `seen` guards against cycles. */
  const expand = (start: number, end: number, seen: ReadonlySet<string>): string => {
    let out = '';
    let at = start;
    for (const spread of spreads) {
      const loc = spread.loc!;
      if (loc.start < start || loc.end > end) continue;
      const name = spread.name.value;
      const fragment = fragments.get(name);
      if (!fragment) throw new Error(`...${name} names no fragment of the document`);
      if (spread.directives?.length) throw new Error(`...${name} carries directives; inline it by hand`);
      if (seen.has(name)) throw new Error(`fragment ${name} spreads itself`);
      const body = expand(
        fragment.selectionSet.loc!.start,
        fragment.selectionSet.loc!.end,
        new Set([...seen, name]),
      );
      const indent = ' '.repeat(loc.startToken.column - 1);
      out += `${text.slice(at, loc.start)}... on ${fragment.typeCondition.name.value} ${body.replaceAll('\n', `\n${indent}`)}`;
      at = loc.end;
    }
    return out + text.slice(at, end);
  };

  let out = '';
  let at = 0;
  document.definitions.forEach((definition, index) => {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      // Drop the fragment with the text between it and the definition before (its comment, blank lines).
      const from = index === 0 ? definition.loc!.start : document.definitions[index - 1]!.loc!.end;
      out += text.slice(at, from);
      at = definition.loc!.end;
    } else {
      out +=
        text.slice(at, definition.loc!.start) + expand(definition.loc!.start, definition.loc!.end, new Set());
      at = definition.loc!.end;
    }
  });
  return out + text.slice(at);
}
