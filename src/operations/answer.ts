import type { Watch } from '../subscriptions/watch-hub.js';

/**
 * What an operation hands back to the executor: one artifact (named after the operation) holding
 * a data part for programs and a text part for people. Streaming operations hand back chunks.
 */
export interface Answer {
  /** `registration`, `validation`, `search-results`, `entry`, `entries`, `unregistration`. */
  artifactName: string;
  data: Record<string, unknown>;
  text: string;
}

/** One chunk of a streamed artifact: appended to the previous chunks by the client. */
export interface AnswerChunk {
  data: Record<string, unknown>;
  text: string;
}

/** A streamed answer: chunks in order; the last one is marked lastChunk by the executor. */
export interface StreamedAnswer {
  artifactName: string;
  chunks: AsyncIterable<AnswerChunk>;
}

/**
 * A standing search: the task stays WORKING until the watch ends; its current matches (unless
 * `initial` is false) and its events are told from the watch itself (Watch.initialMatches, listen).
 */
export interface WatchAnswer {
  artifactName: 'watch-results';
  watch: Watch;
}

export type OperationResult = Answer | StreamedAnswer | WatchAnswer;

export const isStreamed = (r: OperationResult): r is StreamedAnswer => 'chunks' in r;
export const isWatch = (r: OperationResult): r is WatchAnswer => 'watch' in r;
