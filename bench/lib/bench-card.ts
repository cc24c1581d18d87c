/** A typical small v1.0 agent card for HTTP benchmarks: two skills, a unique interface URL. */
export function benchCard(name: string, url: string, description = `${name} translates invoices and checks VAT for small businesses.`) {
  return {
    name,
    description,
    version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      { id: 'translate', name: 'Translate invoice', description: 'Translates an invoice.', tags: ['finance', 'translation'], examples: ['Translate this invoice'] },
      { id: 'vat', name: 'Check VAT', description: 'Checks the VAT lines of an invoice.', tags: ['finance', 'tax'], examples: ['Check the VAT'] },
    ],
  };
}
