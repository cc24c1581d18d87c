/** Valid documents for tests, built fresh each call so a test can change them freely. */

export function v1Card(name = 'Invoice Agent', url = 'https://invoices.example.org/a2a/jsonrpc') {
  return {
    name,
    description: `${name} translates and checks invoices.`,
    version: '1.2.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain', 'application/pdf'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'translate-invoice',
        name: 'Translate invoice',
        description: 'Translates an invoice into another language, keeping amounts and tax lines.',
        tags: ['finance', 'translation'],
        examples: ['Translate this invoice into German'],
      },
      {
        id: 'check-vat',
        name: 'Check VAT',
        description: 'Checks that the VAT of an invoice adds up.',
        tags: ['finance', 'tax'],
        examples: ['Is the VAT on this invoice right?'],
      },
    ],
  };
}

export function v03Card(name = 'Weather Agent', url = 'https://weather.example.org/a2a') {
  return {
    name,
    description: 'Gives weather forecasts for any city.',
    version: '0.9.1',
    protocolVersion: '0.3.0',
    url,
    preferredTransport: 'JSONRPC',
    capabilities: { streaming: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'forecast',
        name: 'Weather forecast',
        description: 'Forecast for the next days in a city.',
        tags: ['weather', 'forecast'],
        examples: ['What is the weather in Rome tomorrow?'],
      },
    ],
  };
}

export function mcpServer(name = 'files', url = 'https://mcp.example.org/files/mcp') {
  return { name, url, description: 'Reads and writes files in a workspace.', version: '1.0.0' };
}

export function toolspec() {
  return {
    tools: [
      {
        name: 'read_file',
        title: 'Read file',
        description: 'Reads a file from the workspace.',
        inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        annotations: { readOnlyHint: true },
      },
      {
        name: 'write_file',
        description: 'Writes a file to the workspace.',
        inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
      },
    ],
  };
}
