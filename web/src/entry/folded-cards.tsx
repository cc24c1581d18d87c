/**
 * A long list of cards (an entry's skills or tools) shown by its first ones, the rest behind a
 * button that counts them ("Show all 150 tools"). Drawn whole, an MCP server's 150 tools made a
 * page 47,000 px tall at phone width, its history and raw JSON beyond all of them. The cards
 * something points at are shown too, in their place among the first: the one the link's
 * fragment names (#tool-read_file) and those the search the person came from matched, so a
 * match or a link never lands on a folded card.
 */
import { Fragment, type VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** How many cards show before the button. */
const FIRST_SHOWN = 10;
/** A list up to this long is drawn whole: a button that reveals one or two cards costs more than they do. */
const DRAWN_WHOLE_UP_TO = FIRST_SHOWN + 2;

export function FoldedCards<T>({
  items,
  noun,
  anchors,
  render,
  matched,
  target,
}: {
  items: readonly T[];
  /** What the cards are, plural: "tools", "skills". */
  noun: string;
  /** Each card's id on the page, by its place in `items` (cardAnchors). */
  anchors: readonly string[];
  /** The card: an <li> whose id is its anchor. */
  render: (item: T, anchor: string) => VNode;
  /** Anchors of the cards the search the person came from matched. */
  matched: ReadonlySet<string>;
  /** The anchor the page's URL points at (its fragment), if any. */
  target: string | undefined;
}) {
  const [whole, setWhole] = useState(false);
  // The first card the button revealed: the focus goes there, not back to the top of the page with the button gone.
  const [revealedFrom, setRevealedFrom] = useState<number>();
  const list = useRef<HTMLUListElement>(null);
  useEffect(() => {
    if (revealedFrom === undefined) return;
    const card = list.current?.children[revealedFrom];
    if (card instanceof HTMLElement) {
      card.tabIndex = -1;
      card.focus();
    }
  }, [revealedFrom]);

  const isMatched = (i: number) => matched.has(anchors[i]!);
  const isLinked = (i: number) => anchors[i] === target;
  const foldable = !whole && items.length > DRAWN_WHOLE_UP_TO;
  const shown = items.map((_, i) => !foldable || i < FIRST_SHOWN || isMatched(i) || isLinked(i));
  // Folded when something is left out: the cards pointed at may be all those past the first 10.
  const folded = shown.includes(false);
  const beyond = items.flatMap((_, i) => (i >= FIRST_SHOWN && shown[i] ? [i] : []));
  const byMatch = beyond.filter(isMatched).length;
  const byLink = beyond.some((i) => isLinked(i) && !isMatched(i));
  // Read by whoever opens the link: the person who searched, or someone it was shared with.
  const also = [byMatch > 0 && `${byMatch} matched by the search`, byLink && 'the one this link points to'].filter(Boolean);
  return (
    <>
      <ul class="cards" ref={list}>
        {items.map((item, i) => shown[i] && <Fragment key={i}>{render(item, anchors[i]!)}</Fragment>)}
      </ul>
      {folded && (
        <p class="folded-cards">
          <span>
            Showing the first {FIRST_SHOWN} of {items.length} {noun}
            {also.length > 0 && `, and ${also.join(' and ')}`}.
          </span>{' '}
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setWhole(true);
              setRevealedFrom(shown.indexOf(false));
            }}
          >
            Show all {items.length} {noun}
          </button>
        </p>
      )}
    </>
  );
}
