/**
 * A document to register or validate, as the request parser read it from a message (or, later,
 * as a door or a fetch produced it). The registry validates and stores it; it lives in the
 * contract layer because both the operations (which build it) and the registry (which consumes
 * it) speak it.
 */
/**
 * A document's text as its author wrote it, and the JSON Pointer of the value it holds in the
 * document validated and stored: what only the text shows (a key given twice, a number rounded
 * as it is read) is checked on it.
 */
export interface WrittenText {
  text: string;
  /** '' for the document itself; '/toolspec' for an uploaded toolspec.json, whose server came beside it. */
  at: string;
}

/**
 * An uploaded or inline document to register or validate. `written`: its text as its author
 * wrote it, when the registry has it (a file part, a fetched card, an imported file); a data
 * part arrives parsed with its request, and has none.
 */
export type Subject =
  | {
      type: 'agent-card';
      card: unknown;
      /** The card exactly as received: the decoded file, or the data part's compact JSON. */
      documentText: string;
      sizeBytes: number;
      written?: WrittenText;
    }
  | {
      type: 'mcp-server';
      /** Server metadata; absent only when validating a bare toolspec. */
      server: unknown;
      toolspec: unknown;
      /** The toolspec exactly as received. */
      toolspecText: string;
      sizeBytes: number;
      written?: WrittenText;
    };
