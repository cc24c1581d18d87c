/**
 * One normalised description of a registered document, whatever its generation: what storage
 * keys on, what search indexes and what answers show (built by registry/describe.ts). It sits
 * in the contract layer because both the registry and the search index speak it.
 */
import type { EntryInterface, EntryKind, McpToolAnnotations } from './types.js';

export interface SkillDescription {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples: string[];
  inputModes?: string[];
  outputModes?: string[];
}

export interface ToolDescription {
  name: string;
  title?: string;
  description: string;
  annotationTitle?: string;
  /** Annotation hints with the MCP defaults applied where a hint is absent. */
  hints: Required<Pick<McpToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>>;
}

export interface EntryDescription {
  kind: EntryKind;
  name: string;
  description: string;
  provider?: string;
  /** Agents: the A2A generation of the card ("0.3" or "1.0"); absent for MCP servers. */
  protocolVersion?: string;
  interfaces: EntryInterface[];
  /** The URL that identifies "the same agent" across registrations: the primary interface URL. */
  identityUrl: string;
  streaming: boolean;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: SkillDescription[];
  tools: ToolDescription[];
}
