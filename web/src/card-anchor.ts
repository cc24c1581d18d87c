/**
 * The id of a skill's or a tool's card on its entry's page: the target of a link to it
 * (/entries/{id}#tool-read_file), and how the search's matches name the cards the entry page
 * shows however long its list (see last-search and entry/folded-cards).
 */
export const cardAnchor = (type: 'skill' | 'tool', id: string): string => `${type}-${id}`;
