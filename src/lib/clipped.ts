/**
 * Text a message quotes from what someone else chose (a header, an id, a URL), cut to its first
 * `max` characters and an ellipsis when longer: enough to recognise it, never the whole of a
 * value that may run to kilobytes into a refusal, a log line or an entry's health.
 */
export const clipped = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);
