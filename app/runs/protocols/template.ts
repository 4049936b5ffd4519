/**
 * Fills `{name}` placeholders of a prompt template in one pass. The inserted
 * texts are taken literally: no `$&`, `$$`, `` $` `` or `$'` replacement
 * patterns (String.replace with a string would interpret them), and a value
 * that itself contains `{name}` is never filled again.
 */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(values, name) ? values[name] : whole,
  );
}
