/**
 * A document to register or validate, as the request parser read it from a message (or, later,
 * as a door or a fetch produced it). The registry validates and stores it; it lives in the
 * contract layer because both the operations (which build it) and the registry (which consumes
 * it) speak it.
 */
/** An uploaded or inline document to register or validate. */
export type Subject =
  | {
      type: 'agent-card';
      card: unknown;
      /** The card exactly as received: the decoded file, or the data part's compact JSON. */
      documentText: string;
      sizeBytes: number;
    }
  | {
      type: 'mcp-server';
      /** Server metadata; absent only when validating a bare toolspec. */
      server: unknown;
      toolspec: unknown;
      /** The toolspec exactly as received. */
      toolspecText: string;
      sizeBytes: number;
    };
