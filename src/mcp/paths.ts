/** Where the MCP door listens; the catalog points MCP clients here. */
export const MCP_PATH = '/mcp';
/** The registry's own MCP Server Card, at the location the Server Card draft reserves (`<endpoint>/server-card`). */
export const MCP_SERVER_CARD_PATH = `${MCP_PATH}/server-card`;

/** MCP protocol versions the endpoint speaks (the SDK's). */
export { SUPPORTED_PROTOCOL_VERSIONS as MCP_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
