/** Whether a string has the form of a UUID (8-4-4-4-12 hex digits, any case), as every entry and task id has. */
const UUID_FORM = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(id: string): boolean {
  return UUID_FORM.test(id);
}
