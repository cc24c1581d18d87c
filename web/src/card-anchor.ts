/**
 * The id of a skill's or a tool's card on its entry's page: the target of a link to it
 * (/entries/{id}#tool-read_file), and how the search's matches name the cards the entry page
 * shows however long its list (see matched-cards and entry/folded-cards).
 */
export const cardAnchor = (type: 'skill' | 'tool', id: string): string => `${type}-${id}`;

/**
 * The ids of a list's cards, in its order, each unique on the page. A card is its key's anchor
 * (cardAnchor: a skill's id, a tool's name), which links and search matches name. A card whose key
 * cannot name it alone gets its place in the list instead (`tools-3`: the third tool, counted
 * from 1): one with no key (a tool with no name, a skill with no id), which all shared the anchor
 * `tool-unnamed`, and one whose key an earlier card has (duplicate skill ids and tool names are
 * warnings, not refused). A key's anchor always starts `tool-` or `skill-`, so no key reaches a
 * place's; and a place is the card's at every visit of the revision.
 */
export function cardAnchors(type: 'skill' | 'tool', keys: readonly (string | undefined)[]): string[] {
  const taken = new Set<string>();
  return keys.map((key, i) => {
    const anchor = key === undefined ? undefined : cardAnchor(type, key);
    if (anchor === undefined || taken.has(anchor)) return `${type}s-${i + 1}`;
    taken.add(anchor);
    return anchor;
  });
}
